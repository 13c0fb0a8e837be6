package io.tally.ingest.topology;

import io.tally.schemas.DeadLetters;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.rules.GradeRules;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.TransactionEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Stages 1-6 as built for production ({@link TallyTopology#build}), fed plain Avro bytes: the
 * registry is the serde's concern, tested elsewhere. Records carry the timestamp {@link #NOW} unless
 * a test says otherwise; late and future are judged against it.
 */
class TallyTopologyTest {
    static final Instant NOW = Instant.parse("2024-03-01T12:00:00Z");
    static final TopologySettings SETTINGS = new TopologySettings(Duration.ofDays(7), Duration.ofMinutes(5),
            Duration.ofDays(35), new BigDecimal("1000000"));

    private TopologyTestDriver driver;
    private TestInputTopic<String, byte[]> input;
    private TestOutputTopic<String, BucketDocument> updates;
    private TestOutputTopic<byte[], byte[]> dlq;

    private void start(GradeRules rules) {
        StreamsBuilder builder = new StreamsBuilder();
        Deserializer<TransactionEvent> plainAvro = (topic, bytes) -> {
            try {
                return new SpecificDatumReader<>(TransactionEvent.class).read(null, DecoderFactory.get().binaryDecoder(bytes, null));
            } catch (IOException | RuntimeException e) {
                throw new org.apache.kafka.common.errors.SerializationException("not a TransactionEvent: " + e, e);
            }
        };
        TallyTopology.build(builder, Topics.Names.DEFAULT, SETTINGS, rules, plainAvro);
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "topology-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        driver = new TopologyTestDriver(builder.build(), p, NOW);
        input = driver.createInputTopic(Topics.TRANSACTIONS, Serdes.String().serializer(), Serdes.ByteArray().serializer());
        updates = driver.createOutputTopic(Topics.BUCKET_UPDATES, Serdes.String().deserializer(), BucketDocumentSerde.serde().deserializer());
        dlq = driver.createOutputTopic(Topics.TRANSACTIONS_DLQ, Serdes.ByteArray().deserializer(), Serdes.ByteArray().deserializer());
    }

    private void startWithDefaultRules() {
        start(GradeRules.load(GradeRules.BUILTIN_DEFAULT));
    }

    @AfterEach
    void tearDown() {
        if (driver != null) driver.close();
    }

    private KeyValueStore<String, BucketDocument> buckets() {
        return driver.getKeyValueStore(TallyTopology.BUCKET_STORE);
    }

    private BucketDocument bucket(String entity, String grade, TimeUnit unit, Instant t) {
        return buckets().get("shop|" + entity + "|" + grade + "|" + unit.code() + "|" + unit.bucketIndex(t));
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
        BucketDocument orders = buckets().get("shop|c-1@example.com|orders-per-email|hour|" + TimeUnit.HOUR.bucketIndex(t));
        assertThat(orders.count()).as("orders-per-email has no filter").isEqualTo(2);
        assertThat(orders.sum()).as("count-only rule").isNull();
        BucketDocument postcode = buckets().get("shop|1000|spend-per-postal-code|day|" + TimeUnit.DAY.bucketIndex(t));
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
        assertThat(buckets().get("shop|c-1|spend|day|" + TimeUnit.DAY.bucketIndex(NOW.plus(Duration.ofDays(8)))).count())
                .as("past the horizon the id is forgotten: documented trade-off").isEqualTo(1);
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void versionsGrowWithEveryChangeAndEveryChangeIsEmitted() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofMinutes(30));
        for (int i = 0; i < 3; i++) send(event("tx-" + i, "c-1", t, "1.00"));
        List<BucketDocument> emitted = updates.readValuesToList().stream()
                .filter(d -> d.id().startsWith("spend-per-customer|hour|")).toList();
        assertThat(emitted).extracting(BucketDocument::ver).containsExactly(1L, 2L, 3L);
        assertThat(emitted).extracting(BucketDocument::count).containsExactly(1L, 2L, 3L);
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
    void eachChangedBucketIsEmittedOnceAtCommitWithItsNewestValue() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(3));
        send(event("tx-1", "c-1", t, "10.00"));
        send(event("tx-2", "c-1", t.plusSeconds(60), "5.00")); // the same five buckets again

        // The test driver commits after every input record: each record's five buckets (customer hour and day,
        // customer-sku day, email hour, postal-code day) are emitted once at its commit, by the commit hook.
        List<TestRecord<String, BucketDocument>> out = updates.readRecordsToList();
        assertThat(out).hasSize(10);
        Map<String, BucketDocument> newest = new java.util.HashMap<>();
        out.forEach(r -> newest.put(r.key(), r.value()));
        BucketDocument hour = newest.get("shop|c-1|spend-per-customer|hour|" + TimeUnit.HOUR.bucketIndex(t));
        assertThat(hour.sum()).isEqualByComparingTo("15.00");
        assertThat(hour.count()).isEqualTo(2);
        assertThat(hour.ver()).isEqualTo(2);
        assertThat(hour.updatedAt()).isNotNull();
        assertThat(bucket("c-1", "spend-per-customer", TimeUnit.HOUR, t)).usingRecursiveComparison().ignoringFields("updatedAt")
                .isEqualTo(hour);
    }

    @Test
    void onlyTheUpdateThatStartsABucketCarriesTheCreatedHeader() {
        startWithDefaultRules();
        Instant t = NOW.minus(Duration.ofHours(2));
        send(event("tx-1", "c-1", t, "10.00"));
        send(event("tx-2", "c-1", t.plusSeconds(60), "5.00"));
        String hourKey = "shop|c-1|spend-per-customer|hour|" + TimeUnit.HOUR.bucketIndex(t);
        List<TestRecord<String, BucketDocument>> hour = updates.readRecordsToList().stream().filter(r -> r.key().equals(hourKey)).toList();
        assertThat(hour).extracting(r -> r.value().ver()).containsExactly(1L, 2L);
        assertThat(hour.get(0).headers().lastHeader(BucketDocumentSerde.CREATED_HEADER)).isNotNull();
        assertThat(hour.get(1).headers().lastHeader(BucketDocumentSerde.CREATED_HEADER)).isNull();
    }

    @Test
    void everyStepThatBecomesATopicOrStoreIsNamed() {
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, Topics.Names.DEFAULT, SETTINGS, GradeRules.load(GradeRules.BUILTIN_DEFAULT), (topic, bytes) -> null);
        String described = builder.build().describe().toString();
        assertThat(described).contains(TallyTopology.SOURCE, "(topic: " + TallyTopology.REPARTITION + "-repartition)",
                TallyTopology.BUCKET_STORE, TallyTopology.DEDUPE_STORE, TallyTopology.FAN_OUT_COMMIT_HOOK,
                TallyTopology.AGGREGATE_COMMIT_HOOK, TallyTopology.SINK, TallyTopology.DLQ_SINK)
                .doesNotContain("KSTREAM-", "KTABLE-");
    }

    @Test
    void bucketsOfOneLogicalPartitionShareAKafkaPartition() {
        PartitionKeyPartitioner p = new PartitionKeyPartitioner();
        BucketDocument a = new BucketDocument("shop|c-1", "spend|hour|1", "spend", "hour", "x", null, 1, null, null, 1, 1, null);
        BucketDocument b = new BucketDocument("shop|c-1", "orders|day|9", "orders", "day", "x", null, 1, null, null, 1, 1, null);
        assertThat(p.partitions("t", "shop|c-1|spend|hour|1", a, 6)).isEqualTo(p.partitions("t", "shop|c-1|orders|day|9", b, 6));
        long distinct = java.util.stream.IntStream.range(0, 100)
                .mapToObj(i -> p.partitions("t", "k", new BucketDocument("shop|c-" + i, "g|hour|1", "g", "hour", "x", null, 1, null, null, 1, 1, null), 6))
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
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            var enc = EncoderFactory.get().binaryEncoder(out, null);
            new SpecificDatumWriter<>(TransactionEvent.class).write(e, enc);
            enc.flush();
            return out.toByteArray();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
