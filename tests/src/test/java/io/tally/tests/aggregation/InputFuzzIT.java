package io.tally.tests.aggregation;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.rules.GradeRules;
import io.tally.schemas.DeadLetters;
import io.tally.ingest.source.SourceTopics;
import io.tally.ingest.topology.TallyTopology;
import io.tally.ingest.topology.TopologySettings;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.testsupport.kafka.TestKafka;
import java.nio.file.Path;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.io.TempDir;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * 10,000 generated bad records ({@link BadRecords}) shuffled among 2,000 good events, through the production topology
 * (stages 1-6, {@link TallyTopology#build}) with the production deserializer and a real schema registry, in a
 * TopologyTestDriver: nothing throws, every record that cannot be aggregated is on the DLQ with a reason, its original
 * bytes and its source coordinates, and the good events' buckets are exactly their sums, counts, minima and maxima.
 * The seed is logged; rerun one with {@code -Dtally.fuzz.seed=N}.
 */
@ExtendWith(LocalStackExtension.class)
class InputFuzzIT {
    private static final Logger log = LoggerFactory.getLogger(InputFuzzIT.class);
    static final int BAD = 10_000;
    static final int GOOD = 2_000;
    static final TopologySettings SETTINGS = new TopologySettings(Duration.ofDays(7), Duration.ofMinutes(5), Duration.ofDays(35),
            new BigDecimal("1000000000"));

    /** Where each kind must end: the DLQ reasons it may have; {@code BIT_FLIPPED} may also decode into a valid event. */
    static final Map<BadRecords.Kind, Set<String>> EXPECTED = new EnumMap<>(Map.of(
            BadRecords.Kind.RANDOM_BYTES, Set.of("DECODE_FAILED"),
            BadRecords.Kind.UNKNOWN_SCHEMA_ID, Set.of("DECODE_FAILED"),
            BadRecords.Kind.TRUNCATED, Set.of("DECODE_FAILED"),
            BadRecords.Kind.EXTREME_DECIMAL, Set.of("INVALID", "DECODE_FAILED"),
            // Valid Avro bytes whose decimal holds no number: the generic reader decodes the record, and the source
            // mapping's amount reader refuses the value (INVALID, naming the amount).
            BadRecords.Kind.EMPTY_DECIMAL, Set.of("INVALID"),
            BadRecords.Kind.EMPTY, Set.of("EMPTY_VALUE")));

    record Sent(BadRecords.Kind kind, byte[] value) {} // kind null: a good event

    @Test
    void tenThousandBadRecordsAmongGoodOnesEndOnTheDlqWithAReasonAndTheGoodOnesCountExactly(LocalSchemaRegistry registry) {
        long seed = Long.getLong("tally.fuzz.seed", System.nanoTime());
        log.info("input fuzz: {} bad among {} good records, seed {} (rerun with -Dtally.fuzz.seed={})", BAD, GOOD, seed, seed);
        Topics.Names topics = Topics.Names.withPrefix("fuzz-" + UUID.randomUUID().toString().substring(0, 8) + "-");
        SchemaRegistryClient client = new SchemaRegistryClient(registry.url());
        int schemaId = client.register(AvroSerdeConfig.subject(topics.transactions(), false), TransactionEvent.getClassSchema());

        Instant now = Instant.now();
        List<TransactionEvent> good = goodEvents(new Random(seed), now, GOOD);
        List<Sent> sent = shuffledWorkload(seed, topics, client, schemaId, good, BAD);

        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, topics, SETTINGS, GradeRules.load(GradeRules.BUILTIN_DEFAULT), SourceTopics.shipped(topics),
                TallyTopology.eventDeserializer(client));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "input-fuzz");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        List<String> crashes = new ArrayList<>();
        Map<Long, TestRecord<byte[], byte[]>> dlqByOffset = new HashMap<>();
        Map<String, BucketDocument> buckets;
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), p, now)) {
            TestInputTopic<byte[], byte[]> input = driver.createInputTopic(topics.transactions(), new ByteArraySerializer(), new ByteArraySerializer());
            for (int offset = 0; offset < sent.size(); offset++) {
                Sent s = sent.get(offset);
                try {
                    input.pipeInput(null, s.value(), now.plusMillis(offset));
                } catch (RuntimeException e) {
                    crashes.add("offset " + offset + " (" + (s.kind() == null ? "good" : s.kind()) + ", " + hex(s.value()) + "): " + e);
                }
            }
            driver.createOutputTopic(topics.transactionsDlq(), new ByteArrayDeserializer(), new ByteArrayDeserializer())
                    .readRecordsToList().forEach(r -> dlqByOffset.put(Long.parseLong(header(r.headers(), DeadLetters.SOURCE_OFFSET)), r));
            buckets = GradeBuckets.inStore(driver);
        }
        assertThat(crashes).as("records that made the topology throw (seed %d)", seed).isEmpty();

        Map<String, DeadLetter> dead = new HashMap<>();
        dlqByOffset.forEach((offset, r) -> dead.put("0:" + offset, DeadLetter.of(r.headers(), r.value())));
        Map<String, Sent> byPosition = new HashMap<>();
        for (int offset = 0; offset < sent.size(); offset++) byPosition.put("0:" + offset, sent.get(offset));
        assertOutcomes("TopologyTestDriver", seed, topics, byPosition, dead);
        assertGoodBuckets(good, buckets);
    }

    /**
     * The same through a real broker and ingest-app (aggregate role, in-process): 2,000 bad records among 500 good
     * events on the six partitions of {@code transactions}; the DLQ and {@code bucket-updates} are read back.
     */
    @Test
    void badRecordsThroughARealBrokerAndIngestAppEndOnTheDlqAndTheGoodOnesCountExactly(TestKafka kafka, LocalSchemaRegistry registry,
                                                                                      @TempDir Path dir) throws Exception {
        long seed = Long.getLong("tally.fuzz.seed", System.nanoTime());
        log.info("input fuzz through the broker: 2000 bad among 500 good records, seed {}", seed);
        String prefix = "fuzz-broker-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Topics.Names topics = AggregationIT.createTopics(kafka, prefix);
        SchemaRegistryClient client = new SchemaRegistryClient(registry.url());
        int schemaId = client.register(AvroSerdeConfig.subject(topics.transactions(), false), TransactionEvent.getClassSchema());
        List<TransactionEvent> good = goodEvents(new Random(seed), Instant.now(), 500);
        Map<String, Sent> byPosition = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.LINGER_MS_CONFIG, 5),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            List<java.util.concurrent.Future<RecordMetadata>> acks = new ArrayList<>();
            List<Sent> sent = shuffledWorkload(seed, topics, client, schemaId, good, 2_000);
            for (Sent s : sent) acks.add(producer.send(new ProducerRecord<>(topics.transactions(), s.value())));
            for (int i = 0; i < sent.size(); i++) {
                RecordMetadata m = acks.get(i).get(60, java.util.concurrent.TimeUnit.SECONDS); // every send checked
                byPosition.put(m.partition() + ":" + m.offset(), sent.get(i));
            }
        }
        String appId = prefix + "app";
        try (IngestApp ingest = new IngestApp(IngestSettings.load(AggregationIT.ingestFlags(kafka, registry, topics, appId, dir), Map.of()))) {
            ingest.start();
            AggregationIT.awaitDrained(kafka, appId, topics.transactions(), Duration.ofSeconds(180));
        }
        Map<String, DeadLetter> dead = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : TestKafka.readCommitted(kafka.bootstrapServers(), topics.transactionsDlq(),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            DeadLetter d = DeadLetter.of(r.headers(), r.value());
            dead.put(d.sourcePartition() + ":" + d.sourceOffset(), d);
        }
        assertOutcomes("broker", seed, topics, byPosition, dead);
        assertGoodBuckets(good, GradeBuckets.latestOn(kafka.bootstrapServers(), topics.bucketUpdates()));
    }

    /** A record of the input DLQ: its reason, message, source coordinates (headers) and value. */
    record DeadLetter(String reason, String message, String sourceTopic, String sourcePartition, String sourceOffset, byte[] value) {
        static DeadLetter of(org.apache.kafka.common.header.Headers h, byte[] value) {
            return new DeadLetter(header(h, DeadLetters.REASON), header(h, DeadLetters.MESSAGE), header(h, DeadLetters.SOURCE_TOPIC),
                    header(h, DeadLetters.SOURCE_PARTITION), header(h, DeadLetters.SOURCE_OFFSET), value);
        }
    }

    /** Every record sent (by "partition:offset") ended as its kind allows; the DLQ holds nothing else. */
    private static void assertOutcomes(String path, long seed, Topics.Names topics, Map<String, Sent> sent, Map<String, DeadLetter> dead) {
        Map<String, Long> outcomes = new TreeMap<>();
        List<String> wrong = new ArrayList<>();
        sent.forEach((position, s) -> {
            DeadLetter d = dead.get(position);
            String reason = d == null ? "accepted" : d.reason();
            outcomes.merge((s.kind() == null ? "GOOD" : s.kind().name()) + " -> " + reason, 1L, Long::sum);
            if (d != null) {
                if (d.message() == null || !topics.transactions().equals(d.sourceTopic())) {
                    wrong.add(position + ": DLQ record without message or source topic");
                }
                boolean noValue = s.value() == null || s.value().length == 0;
                boolean same = noValue ? d.value() == null || d.value().length == 0 : Arrays.equals(d.value(), s.value());
                if (!same) wrong.add(position + ": DLQ record does not carry the original bytes");
            }
            String verdict = judge(s, reason);
            if (verdict != null) wrong.add(position + " " + verdict + ": " + hex(s.value()));
        });
        log.info("input fuzz outcomes ({}; kind -> DLQ reason or accepted): {}", path, outcomes);
        assertThat(wrong).as("%s, seed %d; outcomes %s", path, seed, outcomes).isEmpty();
        assertThat(sent.keySet()).as("every DLQ record names a record sent").containsAll(dead.keySet());
    }

    /** The good events' spend-per-customer hour buckets are exactly their sums, counts, minima and maxima; no others. */
    private static void assertGoodBuckets(List<TransactionEvent> good, Map<String, BucketDocument> buckets) {
        Map<String, BucketDocument> expected = expectedHourBuckets(good);
        assertThat(expected).hasSizeGreaterThan(50);
        expected.forEach((key, want) -> {
            BucketDocument got = buckets.get(key);
            assertThat(got).as("bucket %s", key).isNotNull();
            assertThat(got.count()).as("count of %s", key).isEqualTo(want.count());
            assertThat(got.sum()).as("sum of %s", key).isEqualByComparingTo(want.sum());
            assertThat(got.min()).as("min of %s", key).isEqualByComparingTo(want.min());
            assertThat(got.max()).as("max of %s", key).isEqualByComparingTo(want.max());
        });
        assertThat(buckets.keySet().stream().filter(k -> k.startsWith("good|") && k.contains("|spend-per-customer|hour|")))
                .as("no spend-per-customer hour bucket of the good domain beyond the expected ones").hasSize(expected.size());
    }

    /**
     * A customerId of 3,000 characters makes a partition key beyond Cosmos's 2 KB limit, a SKU of 1,100 an id beyond its
     * 1,023 bytes: no bucket of such an event can ever be written, so stage 1 dead-letters it as INVALID
     * ({@code EventValidator.MAX_KEY_BYTES}) instead of aggregating buckets that Cosmos would refuse for good.
     */
    @Test
    void keyFieldsTooLongForCosmosAreDeadLetteredAsInvalid(LocalSchemaRegistry registry) {
        Topics.Names topics = Topics.Names.withPrefix("fuzz-" + UUID.randomUUID().toString().substring(0, 8) + "-");
        SchemaRegistryClient client = new SchemaRegistryClient(registry.url());
        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>(client);
        Instant now = Instant.now();
        TransactionEvent base = goodEvents(new Random(1), now, 1).get(0);
        List<TransactionEvent> tooLong = List.of(
                TransactionEvent.newBuilder(base).setTransactionId("long-1").setCustomerId("c".repeat(3_000)).build(),
                TransactionEvent.newBuilder(base).setTransactionId("long-2").setSku("s".repeat(1_100)).build(),
                TransactionEvent.newBuilder(base).setTransactionId("long-3").setDomain("d".repeat(3_000)).build());
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, topics, SETTINGS, GradeRules.load(GradeRules.BUILTIN_DEFAULT), SourceTopics.shipped(topics),
                TallyTopology.eventDeserializer(client));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "input-fuzz-long");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), p, now)) {
            TestInputTopic<byte[], byte[]> input = driver.createInputTopic(topics.transactions(), new ByteArraySerializer(), new ByteArraySerializer());
            tooLong.forEach(e -> input.pipeInput(null, serializer.serialize(topics.transactions(), e), now));
            List<String> reasons = driver.createOutputTopic(topics.transactionsDlq(), new ByteArrayDeserializer(), new ByteArrayDeserializer())
                    .readRecordsToList().stream().map(r -> header(r.headers(), DeadLetters.REASON)).toList();
            assertThat(reasons).containsExactly("INVALID", "INVALID", "INVALID");
        }
    }

    /** What is wrong with the outcome {@code reason} ("accepted" or a DLQ reason) of {@code s}, or null. */
    private static String judge(Sent s, String reason) {
        if (s.kind() == null) return reason.equals("accepted") ? null : "a good event went to the DLQ as " + reason;
        if (s.kind() == BadRecords.Kind.BIT_FLIPPED) return null; // either is right: Avro has no checksum
        if (s.kind() == BadRecords.Kind.HUGE_NON_KEY_FIELDS) return reason.equals("accepted") ? null : "a large valid event went to the DLQ as " + reason;
        return EXPECTED.get(s.kind()).contains(reason) ? null : s.kind() + " ended as " + reason + ", expected " + EXPECTED.get(s.kind());
    }

    /** {@code good} serialized with the registered schema and {@code bad} generated records, in an order from the seed. */
    private static List<Sent> shuffledWorkload(long seed, Topics.Names topics, SchemaRegistryClient client, int schemaId,
                                               List<TransactionEvent> good, int bad) {
        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>(client);
        List<Sent> sent = new ArrayList<>();
        good.forEach(e -> sent.add(new Sent(null, serializer.serialize(topics.transactions(), e))));
        BadRecords generator = new BadRecords(seed, schemaId);
        for (int i = 0; i < bad; i++) {
            BadRecords.Bad b = generator.next();
            sent.add(new Sent(b.kind(), b.value()));
        }
        Collections.shuffle(sent, new Random(seed));
        return sent;
    }

    /** Good events: 200 customers of domain {@code good}, times over the last 3 hours, amounts 0.01-999.99. */
    private static List<TransactionEvent> goodEvents(Random random, Instant now, int count) {
        List<TransactionEvent> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            BigDecimal amount = BigDecimal.valueOf(1 + random.nextInt(99_999), 2).setScale(4);
            out.add(TransactionEvent.newBuilder().setTransactionId("good-tx-" + i).setEventTime(now.minusSeconds(random.nextInt(3 * 3600)))
                    .setDomain("good").setCustomerId("good-" + random.nextInt(200)).setEmail(null).setPostalCode(null)
                    .setSku("sku-" + random.nextInt(10)).setMerchant("m-1").setChannel("WEB").setAmount(amount).setCurrency("USD")
                    .setStatus("APPROVED").setAttributes(Map.of()).build());
        }
        return out;
    }

    /** The spend-per-customer hour buckets the good events make, keyed {@code pk|grade|unit|bucketIndex}. */
    private static Map<String, BucketDocument> expectedHourBuckets(List<TransactionEvent> good) {
        Map<String, BucketDocument> out = new HashMap<>();
        for (TransactionEvent e : good) {
            long hour = TimeUnit.HOUR.bucketIndex(e.getEventTime());
            String key = "good|" + e.getCustomerId() + "|spend-per-customer|hour|" + hour;
            BigDecimal a = e.getAmount();
            out.merge(key, new BucketDocument(null, null, null, null, null, a, 1, a, a, 0, null, null),
                    (x, y) -> new BucketDocument(null, null, null, null, null, x.sum().add(y.sum()), x.count() + y.count(),
                            x.min().min(y.min()), x.max().max(y.max()), 0, null, null));
        }
        return out;
    }

    private static String header(org.apache.kafka.common.header.Headers headers, String name) {
        Header h = headers.lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static String hex(byte[] b) {
        if (b == null) return "null";
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(b.length, 48); i++) sb.append(String.format("%02x", b[i]));
        return sb + (b.length > 48 ? "... (" + b.length + " bytes)" : "");
    }
}
