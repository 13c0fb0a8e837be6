package io.tally.tests.aggregation;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.ingest.Main;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.schemas.DeadLetters;
import io.tally.ingest.topology.TallyTopology;
import io.tally.loadgen.Loadgen;
import io.tally.loadgen.LoadgenSettings;
import io.tally.model.BucketDocument;
import io.tally.schemas.Topics;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.process.ChildJvm;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stages 1-6 on the real broker and registry, judged by loadgen's ground truth (computed by its own
 * code from the same rule file): after the input drains, the last value of every bucket on
 * bucket-updates equals the truth, no bucket is extra, and the DLQ holds exactly the records loadgen
 * broke on purpose, by reason. Loadgen sends duplicates, late, future, invalid and malformed records.
 */
@ExtendWith(LocalStackExtension.class)
class AggregationIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(120);

    @Test
    void bucketUpdatesEqualTheGroundTruth(TestKafka kafka, LocalSchemaRegistry registry, @TempDir Path dir) throws Exception {
        Topics.Names topics = createTopics(kafka, "agg-" + UUID.randomUUID().toString().substring(0, 8) + ".");
        JsonNode truth = produce(kafka, registry, topics, dir, 4000, 1);
        String appId = "agg-" + UUID.randomUUID();
        try (IngestApp ingest = new IngestApp(IngestSettings.load(ingestFlags(kafka, registry, topics, appId, dir), Map.of()))) {
            ingest.start();
            awaitDrained(kafka, appId, topics.transactions(), DRAIN_TIMEOUT);
        }
        assertMatchesTruth(kafka, topics, truth);
    }

    @Test
    void aStreamsProcessKilledMidRunAndRestartedStillCountsEveryEventOnce(TestKafka kafka, LocalSchemaRegistry registry,
                                                                           @TempDir Path dir) throws Exception {
        Topics.Names topics = createTopics(kafka, "agg-kill-" + UUID.randomUUID().toString().substring(0, 8) + ".");
        String appId = "agg-kill-" + UUID.randomUUID();
        List<String> args = List.of(ingestFlags(kafka, registry, topics, appId, dir));
        Path log = dir.resolve("ingest.log");

        JsonNode first = produce(kafka, registry, topics, dir, 3000, 7);
        ChildJvm streams = ChildJvm.start(Main.class, args, Map.of(), log);
        awaitSomeOutput(kafka, topics, streams);
        streams.kill(); // SIGKILL mid-run: open transactions abort, state is restored from the changelog
        JsonNode second = produce(kafka, registry, topics, dir, 3000, 8);
        try (ChildJvm restarted = ChildJvm.start(Main.class, args, Map.of(), log)) {
            awaitDrained(kafka, appId, topics.transactions(), DRAIN_TIMEOUT);
            assertThat(restarted.isAlive()).as("restarted ingest-app\n%s", restarted.logTail()).isTrue();
        }
        assertMatchesTruth(kafka, topics, merge(first, second));
    }

    // --- helpers --------------------------------------------------------------------------------

    static Topics.Names createTopics(TestKafka kafka, String prefix) {
        Topics.Names names = Topics.Names.withPrefix(prefix);
        kafka.createTopics(Topics.specs(names).stream().map(s -> TestKafka.topic(s.name(), s.partitions(), s.configs())).toList());
        return names;
    }

    static String[] ingestFlags(TestKafka kafka, LocalSchemaRegistry registry, Topics.Names topics, String appId, Path dir) {
        String prefix = topics.transactions().substring(0, topics.transactions().length() - Topics.TRANSACTIONS.length());
        return new String[] {
                "--ingest.role=aggregate", "--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--schema.registry.url=" + registry.url(), "--topics.prefix=" + prefix,
                "--ingest.application-id=" + appId, "--ingest.state-dir=" + dir.resolve("state-" + appId),
                "--ingest.commit-interval.ms=200",
                // Every role serves /metrics and /health now; a free port keeps these instances off the default 9464.
                "--sink.metrics.port=0",
                // The aggregation reads the deployment's rules record (docs/DESIGN.md, "Rules that change"): a database of its own.
                "--cosmos.endpoint=" + io.tally.testsupport.cosmos.LocalCosmos.get().endpoint(), "--cosmos.database=" + appId};
    }

    /** Produces a Zipf workload with every kind of bad record at 1 % each; returns loadgen's ground truth. */
    private static JsonNode produce(TestKafka kafka, LocalSchemaRegistry registry, Topics.Names topics, Path dir,
                                    int events, long seed) throws Exception {
        Path truthFile = dir.resolve("truth-" + seed + ".json");
        Loadgen.Summary s = Loadgen.run(LoadgenSettings.load(new String[] {
                "--kafka.bootstrap.servers=" + kafka.bootstrapServers(), "--schema.registry.url=" + registry.url(),
                "--loadgen.topic=" + topics.transactions(), "--loadgen.events=" + events, "--loadgen.seed=" + seed,
                "--loadgen.domain=agg", "--loadgen.customers=200",
                "--loadgen.duplicate.fraction=0.02", "--loadgen.late.fraction=0.01", "--loadgen.future.fraction=0.01",
                "--loadgen.invalid.fraction=0.01", "--loadgen.malformed.fraction=0.01",
                "--loadgen.ground-truth-file=" + truthFile}, Map.of()));
        assertThat(s.failed()).isZero();
        return JSON.readTree(truthFile.toFile());
    }

    private static void awaitSomeOutput(TestKafka kafka, Topics.Names topics, ChildJvm streams) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        try (Admin admin = kafka.admin()) {
            while (System.nanoTime() < deadline) {
                if (endOffsets(admin, topics.bucketUpdates()).values().stream().mapToLong(Long::longValue).sum() > 0) return;
                assertThat(streams.isAlive()).as("ingest-app\n%s", streams.logTail()).isTrue();
                Thread.sleep(100);
            }
        }
        throw new AssertionError("no bucket updates within 60 s\n" + streams.logTail());
    }

    /**
     * Waits until the application's group has committed every input and repartition record: each partition of
     * either topic that holds records is committed to its end. (Counting committed partitions instead never ends
     * when the producer's sticky partitioner left an input partition empty.)
     */
    static void awaitDrained(TestKafka kafka, String appId, String inputTopic, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String repartition = TallyTopology.repartitionTopic(appId);
        Map<TopicPartition, Long> behind = Map.of();
        try (Admin admin = kafka.admin()) {
            while (System.nanoTime() < deadline) {
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(appId).partitionsToOffsetAndMetadata().get();
                behind = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
                boolean repartitionExists = admin.listTopics().names().get().contains(repartition);
                for (String topic : repartitionExists ? List.of(inputTopic, repartition) : List.of(inputTopic)) {
                    for (var e : endOffsets(admin, topic).entrySet()) {
                        OffsetAndMetadata c = committed.get(e.getKey());
                        long lag = e.getValue() - (c == null ? 0 : c.offset());
                        if (lag > 0) behind.put(e.getKey(), lag);
                    }
                }
                if (repartitionExists && behind.isEmpty()) return;
                Thread.sleep(200);
            }
        }
        throw new AssertionError("group " + appId + " still behind after " + timeout + " (records per partition): " + behind);
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin, String topic) throws Exception {
        var desc = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        desc.partitions().forEach(p -> req.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(req).all().get().forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    private static void assertMatchesTruth(TestKafka kafka, Topics.Names topics, JsonNode truth) throws Exception {
        Map<String, BucketDocument> latest = GradeBuckets.latestOn(kafka.bootstrapServers(), topics.bucketUpdates());
        Map<String, JsonNode> expected = new HashMap<>();
        truth.get("buckets").fields().forEachRemaining(pk -> pk.getValue().fields()
                .forEachRemaining(id -> expected.put(pk.getKey() + "|" + id.getKey(), id.getValue())));
        assertThat(expected).as("ground truth buckets").hasSizeGreaterThan(100);
        assertThat(latest.keySet()).as("buckets emitted = buckets expected").containsExactlyInAnyOrderElementsOf(expected.keySet());
        for (Map.Entry<String, JsonNode> e : expected.entrySet()) {
            BucketDocument d = latest.get(e.getKey());
            JsonNode want = e.getValue();
            assertThat(d.count()).as("count of %s", e.getKey()).isEqualTo(want.get("count").asLong());
            for (String agg : List.of("sum", "min", "max")) {
                BigDecimal have = switch (agg) { case "sum" -> d.sum(); case "min" -> d.min(); default -> d.max(); };
                if (want.has(agg)) {
                    assertThat(have).as("%s of %s", agg, e.getKey()).isEqualByComparingTo(want.get(agg).decimalValue());
                } else {
                    assertThat(have).as("%s of %s (not an aggregation of its rule)", agg, e.getKey()).isNull();
                }
            }
        }

        Map<String, Long> dlqByReason = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : TestKafka.readCommitted(kafka.bootstrapServers(), topics.transactionsDlq(), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            dlqByReason.merge(new String(r.headers().lastHeader(DeadLetters.REASON).value(), StandardCharsets.UTF_8), 1L, Long::sum);
        }
        Map<String, Long> expectedDlq = new TreeMap<>();
        truth.get("expected").get("dlq").fields().forEachRemaining(f -> {
            if (f.getValue().asLong() > 0) expectedDlq.put(f.getKey(), f.getValue().asLong());
        });
        assertThat(dlqByReason).as("DLQ records by reason").isEqualTo(expectedDlq);
    }

    /** The ground truth of two runs into one topic: bucket values add up, DLQ counts add up. */
    private static JsonNode merge(JsonNode a, JsonNode b) {
        var out = JSON.createObjectNode();
        var buckets = out.putObject("buckets");
        for (JsonNode t : List.of(a, b)) {
            t.get("buckets").fields().forEachRemaining(pk -> pk.getValue().fields().forEachRemaining(id -> {
                var target = buckets.has(pk.getKey()) ? (com.fasterxml.jackson.databind.node.ObjectNode) buckets.get(pk.getKey())
                        : buckets.putObject(pk.getKey());
                JsonNode have = target.get(id.getKey());
                if (have == null) {
                    target.set(id.getKey(), id.getValue().deepCopy());
                    return;
                }
                var m = (com.fasterxml.jackson.databind.node.ObjectNode) have;
                JsonNode v = id.getValue();
                m.put("count", m.get("count").asLong() + v.get("count").asLong());
                if (m.has("sum")) m.put("sum", m.get("sum").decimalValue().add(v.get("sum").decimalValue()));
                if (m.has("min")) m.put("min", m.get("min").decimalValue().min(v.get("min").decimalValue()));
                if (m.has("max")) m.put("max", m.get("max").decimalValue().max(v.get("max").decimalValue()));
            }));
        }
        var dlq = out.putObject("expected").putObject("dlq");
        for (JsonNode t : List.of(a, b)) {
            t.get("expected").get("dlq").fields().forEachRemaining(f ->
                    dlq.put(f.getKey(), dlq.path(f.getKey()).asLong(0) + f.getValue().asLong()));
        }
        return out;
    }
}
