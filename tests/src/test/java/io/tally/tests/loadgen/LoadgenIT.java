package io.tally.tests.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.loadgen.Loadgen;
import io.tally.loadgen.LoadgenSettings;
import io.tally.loadgen.RecordKind;
import io.tally.loadgen.rules.RuleSet;
import io.tally.loadgen.truth.BucketValue;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loadgen against the real broker and schema registry: what it says it produced is what a consumer reads
 * back, broken records really fail to decode with the pipeline's deserializer, duplicates are byte-for-byte
 * repeats, the ground truth recomputed from the consumed records equals the one loadgen wrote, and a
 * recorded stream replays to the same events and the same ground truth.
 */
@ExtendWith(LocalStackExtension.class)
class LoadgenIT {
    static final int EVENTS = 3_000;

    @Test
    void producesWhatItReportsAndBrokenRecordsFailToDecode(TestKafka kafka, LocalSchemaRegistry registry,
                                                          @TempDir Path dir) throws Exception {
        String topic = topic(kafka, "loadgen-it");
        Loadgen.Summary run = Loadgen.run(settings(kafka, registry, topic, dir,
                "--loadgen.events=" + EVENTS, "--loadgen.duplicate.fraction=0.05", "--loadgen.malformed.fraction=0.05",
                "--loadgen.invalid.fraction=0.02", "--loadgen.late.fraction=0.02", "--loadgen.future.fraction=0.02",
                "--loadgen.record-file=" + dir.resolve("run.avro")));
        assertThat(run.failed()).isZero();
        assertThat(run.acknowledged()).isEqualTo(EVENTS);
        assertThat(dir.resolve("truth.json")).exists();
        GroundTruth truth = run.truth().orElseThrow();
        long malformed = run.acknowledgedByKind().get(RecordKind.MALFORMED);
        assertThat(malformed).isPositive();
        assertThat(truth.expectedDlq().get(GroundTruth.DECODE_FAILED)).isEqualTo(malformed);
        assertThat(truth.expectedDlq().get(GroundTruth.LATE)).isEqualTo(run.acknowledgedByKind().get(RecordKind.LATE));
        assertThat(truth.expectedDlq().get(GroundTruth.FUTURE)).isEqualTo(run.acknowledgedByKind().get(RecordKind.FUTURE));
        assertThat(truth.expectedDlq().get(GroundTruth.INVALID)).isEqualTo(run.acknowledgedByKind().get(RecordKind.INVALID));
        assertThat(truth.duplicates()).isEqualTo(run.acknowledgedByKind().get(RecordKind.DUPLICATE));

        List<ConsumerRecord<byte[], byte[]>> consumed = readAll(kafka, topic, EVENTS);
        assertThat(consumed).hasSize(EVENTS);
        AvroDeserializer<TransactionEvent> deserializer = new AvroDeserializer<>(new SchemaRegistryClient(registry.url()),
                TransactionEvent.getClassSchema());
        GroundTruth recomputed = new GroundTruth(RuleSet.load(Path.of("rules/default-rules.yaml")), Duration.ofMinutes(5));
        Map<String, byte[]> firstBytesById = new HashMap<>();
        long undecodable = 0;
        for (ConsumerRecord<byte[], byte[]> r : consumed) {
            TransactionEvent e;
            try {
                e = deserializer.deserialize(topic, r.value());
            } catch (RuntimeException decodeFailure) {
                undecodable++;
                recomputed.onUndecodable();
                continue;
            }
            recomputed.onEvent(e, Instant.ofEpochMilli(r.timestamp()));
            byte[] first = firstBytesById.putIfAbsent(e.getTransactionId(), r.value());
            if (first != null && !e.getTransactionId().isEmpty()) {
                assertThat(r.value()).as("a duplicate repeats its original byte for byte").isEqualTo(first);
            }
        }
        assertThat(undecodable).isEqualTo(malformed);
        assertThat(recomputed.expectedDlq()).isEqualTo(truth.expectedDlq());
        assertThat(recomputed.accepted()).isEqualTo(truth.accepted());
        assertThat(flatten(recomputed)).isEqualTo(flatten(truth)).isNotEmpty();
    }

    @Test
    void aRecordedStreamReplaysToTheSameGroundTruth(TestKafka kafka, LocalSchemaRegistry registry, @TempDir Path dir)
            throws Exception {
        String original = topic(kafka, "loadgen-rec");
        Path recording = dir.resolve("run.avro");
        Loadgen.Summary recorded = Loadgen.run(settings(kafka, registry, original, dir, "--loadgen.events=1000",
                "--loadgen.duplicate.fraction=0.05", "--loadgen.malformed.fraction=0.02", "--loadgen.record-file=" + recording));
        long malformed = recorded.acknowledgedByKind().getOrDefault(RecordKind.MALFORMED, 0L);
        assertThat(recorded.recorded()).isEqualTo(1000 - malformed);

        String replayTopic = topic(kafka, "loadgen-replay");
        Loadgen.Summary replayed = Loadgen.run(settings(kafka, registry, replayTopic, dir, "--loadgen.mode=replay",
                "--loadgen.replay-file=" + recording, "--loadgen.replay.speed=0",
                "--loadgen.ground-truth-file=" + dir.resolve("replay-truth.json")));
        assertThat(replayed.failed()).isZero();
        assertThat(replayed.acknowledged()).isEqualTo(recorded.recorded());
        GroundTruth a = recorded.truth().orElseThrow(), b = replayed.truth().orElseThrow();
        assertThat(b.accepted()).isEqualTo(a.accepted());
        assertThat(b.duplicates()).isEqualTo(a.duplicates());
        assertThat(flatten(b)).isEqualTo(flatten(a));
        assertThat(b.expectedDlq().get(GroundTruth.DECODE_FAILED)).isZero();

        List<String> sent = readAll(kafka, original, 1000).stream().map(r -> Arrays.toString(r.value())).sorted().toList();
        List<String> again = readAll(kafka, replayTopic, (int) recorded.recorded()).stream().map(r -> Arrays.toString(r.value()))
                .sorted().toList();
        assertThat(sent).containsAll(again); // the same bytes: event time and everything else preserved
    }

    @Test
    void pacesToTheRateAndTheBurst(TestKafka kafka, LocalSchemaRegistry registry, @TempDir Path dir) throws Exception {
        String topic = topic(kafka, "loadgen-paced");
        // 200/s for 3 s with 5x during the second second: 200 + 1000 + 200 records, the last due at ~3 s.
        Loadgen.Summary run = Loadgen.run(settings(kafka, registry, topic, dir, "--loadgen.rate=200",
                "--loadgen.duration.ms=3000", "--loadgen.burst.factor=5", "--loadgen.burst.start.ms=1000",
                "--loadgen.burst.duration.ms=1000"));
        assertThat(run.failed()).isZero();
        assertThat(run.acknowledged()).isEqualTo(1400);
        assertThat(run.elapsed()).isBetween(Duration.ofMillis(2_800), Duration.ofSeconds(20));
    }

    @Test
    void aMissingTopicFailsLoudly(TestKafka kafka, LocalSchemaRegistry registry, @TempDir Path dir) throws Exception {
        // No topic, and the broker does not auto-create: sends time out; every record is reported, none lost silently.
        String topic = "loadgen-missing-" + UUID.randomUUID().toString().substring(0, 8);
        Loadgen.Summary run = Loadgen.run(settings(kafka, registry, topic, dir, "--loadgen.events=3",
                "--kafka.max.block.ms=2000", "--kafka.delivery.timeout.ms=3000", "--kafka.request.timeout.ms=2000",
                "--kafka.linger.ms=0"));
        assertThat(run.failed()).isEqualTo(3);
        assertThat(run.acknowledged()).isZero();
        assertThatThrownBy(() -> Loadgen.run(settings(kafka, registry, topic, dir, "--loadgen.rules-file=/nonexistent.yaml")))
                .hasMessageContaining("/nonexistent.yaml");
    }

    private static LoadgenSettings settings(TestKafka kafka, LocalSchemaRegistry registry, String topic, Path dir,
                                            String... more) {
        List<String> flags = new ArrayList<>(List.of("--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--schema.registry.url=" + registry.url(), "--loadgen.topic=" + topic, "--loadgen.customers=200",
                "--loadgen.ground-truth-file=" + dir.resolve("truth.json")));
        flags.addAll(List.of(more));
        return LoadgenSettings.load(flags.toArray(String[]::new), Map.of());
    }

    private static String topic(TestKafka kafka, String prefix) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        kafka.createTopics(List.of(TestKafka.topic(name, 3, Map.of())));
        return name;
    }

    /** Every bucket as "pk id -> sum/count/min/max", comparable with equals. */
    private static Map<String, String> flatten(GroundTruth t) {
        Map<String, String> out = new TreeMap<>();
        t.buckets().forEach((pk, ids) -> ids.forEach((id, v) -> out.put(pk + " " + id, show(v))));
        return out;
    }

    private static String show(BucketValue v) {
        return v.sum().toPlainString() + "/" + v.count() + "/" + v.min().toPlainString() + "/" + v.max().toPlainString();
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(TestKafka kafka, String topic, int expected) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic)) parts.add(new TopicPartition(topic, p.partition()));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            consumer.poll(Duration.ofMillis(300)).forEach(out::add); // more than expected is a failure too
        }
        return out;
    }
}
