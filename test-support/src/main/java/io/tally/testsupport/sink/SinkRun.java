package io.tally.testsupport.sink;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.ingest.app.IngestSettings;
import io.tally.model.Aggregate;
import io.tally.model.BucketDocument;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import io.tally.model.TimeUnit;
import io.tally.schemas.Topics;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.truth.GroundTruthJudge;
import io.tally.testsupport.truth.GroundTruthJudge.Verdict;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One sink test's (or sink benchmark's) world: its own topics (a unique {@code topics.prefix}: {@code <prefix>bucket-updates}
 * with three partitions and {@code <prefix>bucket-updates.dlq}), its own Cosmos database, a producer of
 * synthetic absolute bucket updates with the expected final state, a reader of what Cosmos holds and a
 * wait until it equals that state.
 */
public final class SinkRun implements AutoCloseable {
    public static final ObjectMapper JSON = new ObjectMapper();

    public final TestKafka kafka;
    final LocalCosmos cosmos;
    public final String id = UUID.randomUUID().toString().substring(0, 8);
    final String prefix;
    public final String topic;
    final String dlq;
    public final String database;
    /** entity bucket key (pk|id) -> newest version produced. */
    final Map<String, EntityBucket> expected = new HashMap<>();
    private final KafkaProducer<String, byte[]> producer;
    private final CosmosAsyncClient client;

    public SinkRun(TestKafka kafka, LocalCosmos cosmos, String name) {
        this.kafka = kafka;
        this.cosmos = cosmos;
        this.prefix = name + "-" + id + "-";
        this.topic = Topics.Names.withPrefix(prefix).bucketUpdates();
        this.dlq = Topics.Names.withPrefix(prefix).bucketUpdatesDlq();
        this.database = "sink-" + name + "-" + id;
        kafka.createTopics(List.of(TestKafka.topic(topic, 3, Map.of("cleanup.policy", "compact")),
                TestKafka.topic(dlq, 1, Map.of())));
        producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5), new StringSerializer(), new ByteArraySerializer());
        client = cosmos.newAsyncClient();
    }

    /** Flags of an ingest-app process running only the sink of this run. */
    public List<String> sinkFlags(String... extra) {
        List<String> f = new ArrayList<>(List.of("--ingest.role=sink", "--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--topics.prefix=" + prefix, "--sink.group-id=sink-" + id, "--cosmos.endpoint=" + cosmos.endpoint(),
                "--cosmos.database=" + database, "--sink.metrics.port=0", "--sink.flush-window.ms=100",
                "--sink.commit-interval.ms=200"));
        f.addAll(List.of(extra));
        return f;
    }

    public IngestSettings settings(String... extra) {
        return IngestSettings.load(sinkFlags(extra).toArray(String[]::new), Map.of());
    }

    /** Version {@code ver} of entity bucket {@code bucket}: one grade, whose count is {@code ver}, as the aggregation has it. */
    static EntityBucket doc(int bucket, long ver) {
        return spend("sinkit|e" + bucket % 40, 500_000 + bucket,
                new Aggregate(BigDecimal.valueOf(ver * 10 + bucket).movePointLeft(2), ver, BigDecimal.ONE, BigDecimal.valueOf(ver)));
    }

    /**
     * An absolute update of a synthetic entity bucket: hour {@code hour} of {@code pk} holding one grade, `spend`, of
     * {@code value} (so its ver is the value's count), a day's ttl, a fixed updatedAt.
     */
    public static EntityBucket spend(String pk, long hour, Aggregate value) {
        EntityBucket d = EntityBucket.main(pk, TimeUnit.HOUR, hour, "2026-11-21T00:00:00Z");
        d.addGrade("spend", value, 86_400);
        d.stamp("2026-11-21T00:00:00Z");
        return d;
    }

    /** Versions {@code fromVer..toVer} of buckets {@code 0..buckets-1}, interleaved; every send checked. */
    public void produce(int buckets, long fromVer, long toVer) {
        produce(0, buckets, fromVer, toVer, null);
    }

    /**
     * Versions {@code fromVer..toVer} of buckets {@code first..first+buckets-1}, each record stamped {@code timestamp}
     * (null: the producer's clock), as the aggregation stamps an update with when its events were produced.
     */
    public void produce(int first, int buckets, long fromVer, long toVer, Long timestamp) {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (long v = fromVer; v <= toVer; v++) {
            for (int b = first; b < first + buckets; b++) {
                EntityBucket d = doc(b, v);
                String key = BucketKey.updateKey(d.pk(), d.id());
                sent.add(producer.send(new ProducerRecord<>(topic, null, timestamp, key, EntityBucketJson.write(d))));
                expected.merge(key, d, (a, n) -> n.ver() >= a.ver() ? n : a);
            }
        }
        await(sent);
    }

    public void sendRaw(String key, byte[] value) {
        await(List.of(send(key, value)));
    }

    private Future<RecordMetadata> send(String key, byte[] value) {
        return producer.send(new ProducerRecord<>(topic, key, value));
    }

    private static void await(List<Future<RecordMetadata>> sent) {
        try {
            for (Future<RecordMetadata> f : sent) f.get();
        } catch (Exception e) {
            throw new IllegalStateException("a bucket update was not acknowledged", e);
        }
    }

    public static byte[] bytes(Object o) {
        try {
            return JSON.writeValueAsBytes(o);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The key under which {@link #produce} sends versions of bucket {@code bucket}. */
    public static String key(int bucket) {
        EntityBucket d = doc(bucket, 1);
        return BucketKey.updateKey(d.pk(), d.id());
    }

    CosmosAsyncContainer container() {
        return client.getDatabase(database).getContainer("buckets");
    }

    /**
     * Until {@code checking} turns false, samples every stored version and records any that is lower
     * than one seen before: a stale write winning. Run it on its own thread.
     */
    public void watchVersions(java.util.concurrent.atomic.AtomicBoolean checking, List<String> regressions) {
        Map<String, Long> seen = new java.util.HashMap<>();
        while (checking.get()) {
            try {
                for (Map.Entry<String, JsonNode> e : stored().entrySet()) {
                    long ver = e.getValue().get("ver").asLong();
                    Long before = seen.put(e.getKey(), ver);
                    if (before != null && ver < before) regressions.add(e.getKey() + ": " + before + " -> " + ver);
                }
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                // a query that failed is no observation
            }
        }
    }

    /** pk|id -> stored entity bucket (ver, grades). Empty while the container does not exist yet. */
    public Map<String, JsonNode> stored() {
        Map<String, JsonNode> out = new HashMap<>();
        try {
            container().queryItems("SELECT c.pk, c.id, c.ver, c.grades FROM c", new CosmosQueryRequestOptions(), JsonNode.class)
                    .toIterable().forEach(n -> out.put(n.get("pk").asText() + "|" + n.get("id").asText(), n));
        } catch (RuntimeException e) {
            if (!String.valueOf(e.getMessage()).contains("404") && !(e instanceof com.azure.cosmos.CosmosException ce && ce.getStatusCode() == 404)) {
                throw e;
            }
        }
        return out;
    }

    /**
     * Waits until Cosmos holds exactly the newest version produced of every entity bucket, every field but
     * {@code updatedAt}, and nothing else; fails with the differences.
     */
    public void awaitAllCorrect(Duration timeout) throws InterruptedException {
        List<BucketDocument> grades = expected.values().stream().flatMap(d -> d.views().stream()).toList();
        Verdict v = GroundTruthJudge.ofDocuments(grades).awaitEqual(container(), timeout, Duration.ofMillis(500));
        if (!v.equal()) throw new AssertionError("after " + timeout.toSeconds() + " s: " + v);
    }

    /**
     * {@link #awaitAllCorrect} while sampling {@code value} every few milliseconds on a thread of its own: the highest
     * value seen meanwhile (what a figure that moves while the sink works peaked at).
     */
    public int highestWhileAwaitingAllCorrect(java.util.function.IntSupplier value, Duration timeout) throws InterruptedException {
        java.util.concurrent.atomic.AtomicInteger highest = new java.util.concurrent.atomic.AtomicInteger(Integer.MIN_VALUE);
        java.util.concurrent.atomic.AtomicBoolean watching = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            while (watching.get()) {
                highest.accumulateAndGet(value.getAsInt(), Math::max);
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "sink-run-watcher");
        watcher.start();
        try {
            awaitAllCorrect(timeout);
        } finally {
            watching.set(false);
            watcher.join();
        }
        return highest.get();
    }

    /** Records on the DLQ (read_committed, from the start), waiting for at least {@code expected}. */
    public List<ConsumerRecord<String, byte[]>> deadLetters(int expected, Duration timeout) {
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "dlq-" + UUID.randomUUID(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(dlq));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) c.poll(Duration.ofMillis(200)).forEach(out::add);
            c.poll(Duration.ofMillis(300)).forEach(out::add);
        }
        return out;
    }

    /** Sum of the sink group's committed offsets over the run's topic. */
    public long committed() {
        try (var admin = kafka.admin()) {
            return admin.listConsumerGroupOffsets("sink-" + id).partitionsToOffsetAndMetadata().get().values().stream()
                    .filter(java.util.Objects::nonNull).mapToLong(o -> o.offset()).sum();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
        try {
            client.getDatabase(database).delete().block(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            // the database may never have been created
        }
        client.close();
    }
}
