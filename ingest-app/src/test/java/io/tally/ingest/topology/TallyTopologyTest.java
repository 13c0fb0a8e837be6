package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.BucketDocument;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.schemas.DeadLetters;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Stages 1-6 as built for production ({@link TallyTopology#build}), fed plain Avro bytes ({@link TopologyHarness}).
 * Records carry the timestamp {@link #NOW} unless a test says otherwise; late and future are judged against it.
 */
class TallyTopologyTest {
    static final Instant NOW = Instant.parse("2024-03-01T12:00:00Z");
    static final TopologySettings SETTINGS = new TopologySettings(Duration.ofDays(7), Duration.ofMinutes(5),
            Duration.ofDays(35), new BigDecimal("1000000"));

    private TopologyHarness harness;
    private TestInputTopic<String, byte[]> input;
    private TestOutputTopic<String, EntityBucket> updates;
    private TestOutputTopic<byte[], byte[]> dlq;

    private void start(GradeRules rules) {
        harness = new TopologyHarness(rules, SETTINGS, TopologyHarness.PLAIN_AVRO, NOW);
        input = harness.input;
        updates = harness.updates;
        dlq = harness.dlq;
    }

    private void startWithDefaultRules() {
        start(GradeRules.load(GradeRules.BUILTIN_DEFAULT));
    }

    @AfterEach
    void tearDown() {
        if (harness != null) harness.close();
    }

    /** The bucket of {@code grade} of {@code shop|entity}, as the read API shows it; null when there is none. */
    private BucketDocument bucket(String entity, String grade, TimeUnit unit, Instant t) {
        return harness.grade("shop|" + entity, grade, unit, unit.bucketIndex(t));
    }

    private static String mainKey(String entity, TimeUnit unit, Instant t) {
        return "shop|" + entity + "|" + EntityBucketId.main(unit, unit.bucketIndex(t));
    }

    private void send(TransactionEvent e) {
        input.pipeInput(e.getCustomerId(), avro(e), NOW);
    }

    @Test
    void spendPerCustomerKeepsSumCountMinAndMaxPerHourAndDay() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(3)).plusSeconds(600); // 09:10
        send(event("tx-1", "c-1", t, "10.50"));
        send(event("tx-2", "c-1", t.plusSeconds(60), "2.25"));
        send(event("tx-3", "c-1", t.plus(Duration.ofHours(1)), "7.00")); // 10:10, next hour, same day
        send(event("tx-4", "c-2", t, "1.00"));

        BucketDocument hour = bucket("c-1", "spend-per-customer", TimeUnit.HOUR, t);
        assertThat(hour.sum()).isEqualByComparingTo("12.75");
        assertThat(hour.count()).isEqualTo(2);
        assertThat(hour.min()).isEqualByComparingTo("2.25");
        assertThat(hour.max()).isEqualByComparingTo("10.50");
        assertThat(hour.bucket()).isEqualTo("2024-03-01T09:00:00Z");
        assertThat(hour.ttl()).isEqualTo((int) Duration.ofDays(35).toSeconds());
        assertThat(bucket("c-1", "spend-per-customer", TimeUnit.HOUR, t.plus(Duration.ofHours(1))).sum()).isEqualByComparingTo("7.00");
        BucketDocument day = bucket("c-1", "spend-per-customer", TimeUnit.DAY, t);
        assertThat(day.sum()).isEqualByComparingTo("19.75");
        assertThat(day.count()).isEqualTo(3);
        assertThat(day.min()).isEqualByComparingTo("2.25");
        assertThat(day.max()).isEqualByComparingTo("10.50");
        assertThat(bucket("c-2", "spend-per-customer", TimeUnit.DAY, t).count()).isEqualTo(1);
    }

    @Test
    void qualifierRulesKeepOneBucketPerQualifierInsideTheEntityPartition() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(1));
        send(event("tx-1", "c-1", t, "5.00", "sku-a"));
        send(event("tx-2", "c-1", t, "6.00", "sku-b"));
        send(event("tx-3", "c-1", t, "1.00", "sku-a"));

        BucketDocument a = bucket("c-1", "spend-per-customer-sku:sku-a", TimeUnit.DAY, t);
        assertThat(a.pk()).isEqualTo("shop|c-1");
        assertThat(a.id()).isEqualTo("spend-per-customer-sku:sku-a|day|" + TimeUnit.DAY.bucketIndex(t));
        assertThat(a.grade()).isEqualTo("spend-per-customer-sku:sku-a");
        assertThat(a.sum()).isEqualByComparingTo("6.00");
        assertThat(a.count()).isEqualTo(2);
        assertThat(a.min()).as("the rule keeps sum and count only").isNull();
        assertThat(bucket("c-1", "spend-per-customer-sku:sku-b", TimeUnit.DAY, t).sum()).isEqualByComparingTo("6.00");
    }

    @Test
    void filtersAndMissingEntityValuesDecideWhichGradesAnEventCountsFor() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(1));
        TransactionEvent declined = TransactionEvent.newBuilder(event("tx-1", "c-1", t, "99.00")).setStatus("DECLINED").build();
        TransactionEvent noPostcode = TransactionEvent.newBuilder(event("tx-2", "c-1", t, "1.00")).setPostalCode(null).build();
        send(declined);
        send(noPostcode);

        assertThat(bucket("c-1", "spend-per-customer", TimeUnit.HOUR, t).sum()).as("DECLINED is filtered out").isEqualByComparingTo("1.00");
        BucketDocument orders = bucket("c-1@example.com", "orders-per-email", TimeUnit.HOUR, t);
        assertThat(orders.count()).as("orders-per-email has no filter").isEqualTo(2);
        assertThat(orders.sum()).as("count-only rule").isNull();
        BucketDocument postcode = bucket("1000", "spend-per-postal-code", TimeUnit.DAY, t);
        assertThat(postcode).as("the declined event had postcode 1000 but is filtered; the other has none").isNull();
    }

    @Test
    void bucketBoundariesFollowUtcCalendarUnits() {
        start(GradeRules.parse("""
                rules:
                  - {name: spend, entity: customerId, value: amount, aggregations: [sum, count],
                     units: [hour, day, month], retention: P400D}
                """, "test"));
        // Clock far enough ahead that none of these is late or future.
        Instant leapDay = Instant.parse("2024-02-29T23:59:59.999Z");
        Instant marchFirst = Instant.parse("2024-03-01T00:00:00Z"); // exactly on an hour, day and month boundary
        send(event("tx-1", "c-1", leapDay, "1.00"));
        send(event("tx-2", "c-1", marchFirst, "2.00"));
        send(event("tx-3", "c-1", marchFirst.minusMillis(1), "4.00"));

        assertThat(bucket("c-1", "spend", TimeUnit.MONTH, leapDay).sum()).isEqualByComparingTo("5.00");
        assertThat(bucket("c-1", "spend", TimeUnit.MONTH, leapDay).bucket()).isEqualTo("2024-02-01T00:00:00Z");
        assertThat(bucket("c-1", "spend", TimeUnit.MONTH, marchFirst).sum()).isEqualByComparingTo("2.00");
        assertThat(bucket("c-1", "spend", TimeUnit.DAY, leapDay).bucket()).isEqualTo("2024-02-29T00:00:00Z");
        assertThat(bucket("c-1", "spend", TimeUnit.DAY, leapDay).count()).isEqualTo(2);
        assertThat(bucket("c-1", "spend", TimeUnit.HOUR, marchFirst).count()).isEqualTo(1);
        assertThat(bucket("c-1", "spend", TimeUnit.HOUR, marchFirst).bucket()).isEqualTo("2024-03-01T00:00:00Z");
    }

    @Test
    void aDuplicateWithinTheHorizonCountsOnceAndAfterItAgain() {
        start(GradeRules.parse("""
                rules:
                  - {name: spend, entity: customerId, value: amount, aggregations: [sum, count], units: [day], retention: P35D}
                """, "test"));
        Instant t = NOW.minus(Duration.ofHours(1));
        TransactionEvent e = event("tx-1", "c-1", t, "10.00");
        input.pipeInput("c-1", avro(e), NOW);
        input.pipeInput("c-1", avro(e), NOW.plus(Duration.ofDays(6))); // a producer retry, or a replay within 7 days
        assertThat(bucket("c-1", "spend", TimeUnit.DAY, t).count()).isEqualTo(1);

        input.pipeInput("c-1", avro(TransactionEvent.newBuilder(e).setEventTime(NOW.plus(Duration.ofDays(8))).build()),
                NOW.plus(Duration.ofDays(8)).plusSeconds(1));
        assertThat(bucket("c-1", "spend", TimeUnit.DAY, NOW.plus(Duration.ofDays(8))).count())
                .as("past the horizon the id is forgotten: documented trade-off").isEqualTo(1);
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void versionsGrowWithEveryChangeAndEveryChangeIsEmitted() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofMinutes(30));
        for (int i = 0; i < 3; i++) send(event("tx-" + i, "c-1", t, "1.00"));
        List<EntityBucket> emitted = updates.readRecordsToList().stream()
                .filter(r -> r.key().equals(mainKey("c-1", TimeUnit.HOUR, t))).map(TestRecord::value).toList();
        assertThat(emitted).extracting(EntityBucket::ver).containsExactly(1L, 2L, 3L);
        assertThat(emitted).extracting(d -> d.grade("spend-per-customer", null).orElseThrow().count()).containsExactly(1L, 2L, 3L);
    }

    @Test
    void badRecordsGoToTheDlqWithReasonAndCoordinatesAndTheStreamGoesOn() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(1));
        byte[] garbage = "{not avro".getBytes(StandardCharsets.UTF_8);
        input.pipeInput("c-1", garbage, NOW);                                                            // offset 0
        input.pipeInput("c-1", new byte[0], NOW);                                                        // 1
        send(event("", "c-1", t, "1.00"));                                                               // 2
        send(event("tx-neg", "c-1", t, "-1.00"));                                                        // 3
        send(TransactionEvent.newBuilder(event("tx-cur", "c-1", t, "1.00")).setCurrency("XYZ").build()); // 4
        send(event("tx-huge", "c-1", t, "1000000.01"));                                                  // 5
        send(event("tx-late", "c-1", NOW.minus(Duration.ofDays(36)), "1.00"));                           // 6
        send(event("tx-future", "c-1", NOW.plus(Duration.ofMinutes(6)), "1.00"));                        // 7
        send(event("tx-ok", "c-1", t, "3.00"));                                                          // 8
        send(event("tx-edge", "c-1", NOW.plus(Duration.ofMinutes(5)), "1.00"));                         // 9: exactly at the skew: accepted

        List<TestRecord<byte[], byte[]>> rejected = dlq.readRecordsToList();
        assertThat(rejected).extracting(r -> header(r, DeadLetters.REASON))
                .containsExactly("DECODE_FAILED", "EMPTY_VALUE", "INVALID", "INVALID", "INVALID", "INVALID", "LATE", "FUTURE");
        assertThat(rejected).extracting(r -> header(r, DeadLetters.SOURCE_OFFSET))
                .containsExactly("0", "1", "2", "3", "4", "5", "6", "7");
        assertThat(rejected.get(0).value()).isEqualTo(garbage);
        assertThat(header(rejected.get(0), DeadLetters.SOURCE_TOPIC)).isEqualTo(Topics.TRANSACTIONS);
        assertThat(header(rejected.get(0), DeadLetters.SOURCE_PARTITION)).isEqualTo("0");
        assertThat(header(rejected.get(0), DeadLetters.TIME)).isEqualTo(NOW.toString());
        assertThat(header(rejected.get(2), DeadLetters.MESSAGE)).contains("transactionId");
        assertThat(header(rejected.get(3), DeadLetters.MESSAGE)).contains("negative");
        assertThat(header(rejected.get(4), DeadLetters.MESSAGE)).contains("XYZ");
        assertThat(header(rejected.get(5), DeadLetters.MESSAGE)).contains("exceeds");

        assertThat(bucket("c-1", "spend-per-customer", TimeUnit.HOUR, t).sum()).isEqualByComparingTo("3.00");
        assertThat(bucket("c-1", "spend-per-customer", TimeUnit.HOUR, NOW.plus(Duration.ofMinutes(5))).count()).isEqualTo(1);
    }

    @Test
    void eachChangedEntityBucketIsEmittedOnceAtCommitWithItsNewestValue() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(3));
        send(event("tx-1", "c-1", t, "10.00"));
        send(event("tx-2", "c-1", t.plusSeconds(60), "5.00")); // the same four entity buckets again

        // The test driver commits after every input record: each record's four entity buckets (customer hour, customer
        // day with both its spend and its per-SKU grade, email hour, postal-code day) are emitted once at its commit,
        // by the commit hook, however many of their grades changed.
        List<TestRecord<String, EntityBucket>> out = updates.readRecordsToList();
        assertThat(out).hasSize(8);
        assertThat(out).filteredOn(r -> r.key().equals(mainKey("c-1", TimeUnit.DAY, t))).hasSize(2)
                .allSatisfy(r -> assertThat(r.value().views()).extracting(BucketDocument::grade)
                        .containsExactly("spend-per-customer", "spend-per-customer-sku:sku-1"));
        Map<String, EntityBucket> newest = new java.util.HashMap<>();
        out.forEach(r -> newest.put(r.key(), r.value()));
        EntityBucket hourDoc = newest.get(mainKey("c-1", TimeUnit.HOUR, t));
        BucketDocument hour = hourDoc.grade("spend-per-customer", null).orElseThrow();
        assertThat(hour.sum()).isEqualByComparingTo("15.00");
        assertThat(hour.count()).isEqualTo(2);
        assertThat(hourDoc.ver()).isEqualTo(2);
        assertThat(hourDoc.updatedAt()).isNotNull();
        assertThat(harness.store().get(mainKey("c-1", TimeUnit.HOUR, t))).usingRecursiveComparison().ignoringFields("updatedAt")
                .isEqualTo(hourDoc);
    }

    @Test
    void anUpdateCarriesTheNewestRecordTimestampOfWhatChangedItNotOfWhatTheStoreHad() {
        // The sink reads an update's timestamp as how far behind its news is: an old record (a backfill's, a late
        // producer's) changing a document that a fresh record changed before must not look fresh.
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(2));
        TransactionEvent fresh = event("tx-1", "c-1", t, "10.00");
        TransactionEvent old = event("tx-2", "c-1", t.plusSeconds(60), "5.00");
        input.pipeInput(fresh.getCustomerId(), avro(fresh), NOW);
        input.pipeInput(old.getCustomerId(), avro(old), NOW.minus(Duration.ofMinutes(10)));
        String hourKey = mainKey("c-1", TimeUnit.HOUR, t);
        List<TestRecord<String, EntityBucket>> hour = updates.readRecordsToList().stream().filter(r -> r.key().equals(hourKey)).toList();
        assertThat(hour).extracting(r -> r.value().ver()).containsExactly(1L, 2L);
        assertThat(hour).extracting(TestRecord::getRecordTime).containsExactly(NOW, NOW.minus(Duration.ofMinutes(10)));
    }

    @Test
    void theStoreHoldsTheBytesEmittedAndTheNewestRecordTimestampItsDocumentSaw() {
        // One encoding per change (EntityBucketJson.write keeps the last it made): what bucket-updates got is what the
        // store and its changelog hold, byte for byte, and the store keeps the newest record timestamp its document saw.
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(2));
        TestOutputTopic<String, byte[]> raw = harness.driver.createOutputTopic(Topics.BUCKET_UPDATES,
                new org.apache.kafka.common.serialization.StringDeserializer(), new org.apache.kafka.common.serialization.ByteArrayDeserializer());
        input.pipeInput("c-1", avro(event("tx-1", "c-1", t, "10.00")), NOW);
        input.pipeInput("c-1", avro(event("tx-2", "c-1", t.plusSeconds(60), "5.25", "sku-2")), NOW.minus(Duration.ofMinutes(10)));
        input.pipeInput("c-1", avro(event("tx-3", "c-1", t.plusSeconds(120), "0.01")), NOW.minus(Duration.ofMinutes(20)));

        Map<String, byte[]> newest = new java.util.HashMap<>();
        raw.readRecordsToList().forEach(r -> newest.put(r.key(), r.value()));
        var stored = harness.driver.<String, EntityBucket>getTimestampedKeyValueStore(TallyTopology.BUCKET_STORE);
        assertThat(newest).hasSize(4);
        newest.forEach((key, bytes) -> {
            EntityBucket inStore = stored.get(key).value();
            assertThat(io.tally.model.EntityBucketJson.write(inStore)).as(key).isEqualTo(bytes);
            assertThat(io.tally.model.EntityBucketJson.decode(bytes)).as(key).usingRecursiveComparison().isEqualTo(inStore);
        });
        String hourKey = mainKey("c-1", TimeUnit.HOUR, t);
        assertThat(stored.get(hourKey).value().ver()).isEqualTo(3);
        assertThat(stored.get(hourKey).timestamp()).isEqualTo(NOW.toEpochMilli());
    }

    @Test
    void onlyTheUpdateThatStartsABucketCarriesTheCreatedHeader() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(2));
        send(event("tx-1", "c-1", t, "10.00"));
        send(event("tx-2", "c-1", t.plusSeconds(60), "5.00"));
        String hourKey = mainKey("c-1", TimeUnit.HOUR, t);
        List<TestRecord<String, EntityBucket>> hour = updates.readRecordsToList().stream().filter(r -> r.key().equals(hourKey)).toList();
        assertThat(hour).extracting(r -> r.value().ver()).containsExactly(1L, 2L);
        assertThat(hour.get(0).headers().lastHeader(EntityBucketSerde.CREATED_HEADER)).isNotNull();
        assertThat(hour.get(1).headers().lastHeader(EntityBucketSerde.CREATED_HEADER)).isNull();
    }

    @Test
    void everyStepThatBecomesATopicOrStoreIsNamed() {
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, Topics.Names.DEFAULT, SETTINGS, GradeRules.load(GradeRules.BUILTIN_DEFAULT), TopologyHarness.SOURCES,
                (topic, bytes) -> null);
        String described = builder.build().describe().toString();
        assertThat(described).contains(TallyTopology.SOURCE, "(topic: " + TallyTopology.REPARTITION + "-repartition)",
                TallyTopology.BUCKET_STORE, TallyTopology.DEDUPE_STORE, TallyTopology.FAN_OUT_COMMIT_HOOK,
                TallyTopology.AGGREGATE_COMMIT_HOOK, TallyTopology.SINK, TallyTopology.DLQ_SINK)
                .doesNotContain("KSTREAM-", "KTABLE-");
        assertThat(described).as("a new store: the changelog of bucket-store holds per-grade documents")
                .contains("entity-bucket-store").doesNotContainPattern("[\\[ ]bucket-store\\b");
    }

    @Test
    void bucketsOfOneLogicalPartitionShareAKafkaPartition() {
        PartitionKeyPartitioner p = new PartitionKeyPartitioner();
        EntityBucket a = EntityBucket.main("shop|c-1", TimeUnit.HOUR, 1, "x");
        EntityBucket b = EntityBucket.page("shop|c-1", TimeUnit.DAY, 9, "x", "spend-per-customer-sku", 3);
        assertThat(p.partitions("t", "shop|c-1|hour|1", a, 6)).isEqualTo(p.partitions("t", "shop|c-1|day|9|spend-per-customer-sku|3", b, 6));
        long distinct = java.util.stream.IntStream.range(0, 100)
                .mapToObj(i -> p.partitions("t", "k", EntityBucket.main("shop|c-" + i, TimeUnit.HOUR, 1, "x"), 6))
                .distinct().count();
        assertThat(distinct).as("different entities spread over the partitions").isEqualTo(6);
    }

    private static String header(TestRecord<byte[], byte[]> r, String key) {
        return new String(r.headers().lastHeader(key).value(), StandardCharsets.UTF_8);
    }

    static TransactionEvent event(String tx, String customer, Instant time, String amount) {
        return event(tx, customer, time, amount, "sku-1");
    }

    static TransactionEvent event(String tx, String customer, Instant time, String amount, String sku) {
        return TransactionEvent.newBuilder().setTransactionId(tx).setEventTime(time).setDomain("shop")
                .setCustomerId(customer).setEmail(customer + "@example.com").setPostalCode("1000").setSku(sku)
                .setMerchant("m-1").setChannel("WEB").setAmount(new BigDecimal(amount).setScale(4))
                .setCurrency("USD").setStatus("APPROVED").setAttributes(Map.of()).build();
    }

    static byte[] avro(TransactionEvent e) {
        return TopologyHarness.avro(e);
    }
}
