package io.tally.tests.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.ingest.Main;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.replay.ReplayException;
import io.tally.ingest.replay.ReplayJob;
import io.tally.ingest.replay.ReplayRange;
import io.tally.ingest.replay.ReplayReport;
import io.tally.ingest.replay.ReplaySettings;
import io.tally.loadgen.Loadgen;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.process.ChildJvm;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import io.tally.testsupport.truth.GroundTruthJudge;
import io.tally.testsupport.truth.GroundTruthJudge.Verdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Invariant 5 on the real broker and Cosmos SDK: a replay of a historical range reproduces exactly what
 * the live run produced. The live run (IngestApp in-process) aggregates loadgen events spread over three
 * past hours, with duplicates and late, future, invalid and malformed records; a replay of the last two
 * hours into another container must hold, for every bucket wholly inside them, the live document
 * (sum, count, min, max, ver) and loadgen's ground truth, and nothing else. Re-running changes nothing;
 * a bucket the live container under-counts is corrected; writes that cannot complete fail the job; a range
 * the topic no longer retains is refused.
 * A recording kept outside Kafka (loadgen's file replay) rebuilds its ground truth through the pipeline.
 */
@ExtendWith(LocalStackExtension.class)
class ReplayIT {
    static final Duration DRAIN = Duration.ofMinutes(4);

    @Test
    void aReplayedRangeEqualsTheLiveRunAndItsGroundTruthAndReRunningChangesNothing(
            TestKafka kafka, LocalSchemaRegistry registry, LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        Instant hour = Instant.now().truncatedTo(ChronoUnit.HOURS);
        try (ReplayWorld world = new ReplayWorld(kafka, registry, cosmos, "equal");
             IngestApp live = new IngestApp(world.liveSettings(dir.resolve("state")))) {
            live.start();
            Loadgen.Summary run = Loadgen.run(world.loadgen(world.topics.transactions(), dir.resolve("truth.json"),
                    "--loadgen.events=3000", "--loadgen.customers=40", "--loadgen.start=" + hour.minus(Duration.ofHours(3)),
                    "--loadgen.window.ms=" + Duration.ofHours(3).toMillis(), "--loadgen.duplicate.fraction=0.05",
                    "--loadgen.late.fraction=0.01", "--loadgen.future.fraction=0.01", "--loadgen.invalid.fraction=0.01",
                    "--loadgen.malformed.fraction=0.01"));
            assertThat(run.failed()).isZero();
            GroundTruth truth = run.truth().orElseThrow();
            world.awaitEqual(GroundTruthJudge.of(truth), "buckets", DRAIN);

            // The last two of the three hours, into a container of its own.
            ReplayRange range = new ReplayRange(hour.minus(Duration.ofHours(2)), hour);
            ReplayReport first = replay(world, range, "--container=replayed");
            assertThat(first.complete()).isTrue();
            assertThat(first.partitions()).isEqualTo(3);
            assertThat(first.recordsRead()).isEqualTo(first.recordsToRead()).isEqualTo(run.acknowledged());
            assertThat(rejectedByReason(first)).as("the same rejections as the live run's DLQ").isEqualTo(nonZero(truth.expectedDlq()));
            assertThat(first.skippedAtBounds()).as("day buckets reach beyond two hours").isPositive();

            Map<String, JsonNode> liveDocs = world.stored("buckets");
            Map<String, JsonNode> replayed = world.stored("replayed");
            Map<String, JsonNode> inRange = new TreeMap<>();
            liveDocs.forEach((key, doc) -> { if (inside(range, doc)) inRange.put(key, doc); });
            assertThat(inRange).hasSizeGreaterThan(50);
            assertThat(replayed.keySet()).as("exactly the live buckets wholly inside the range").isEqualTo(inRange.keySet());
            inRange.forEach((key, doc) -> assertThat(values(replayed.get(key))).as(key).isEqualTo(values(doc)));
            Verdict replayedVsTruth = GroundTruthJudge.of(truth).restrictedTo((pk, id) -> gradeInside(range, id)).judge(replayed.values());
            assertThat(replayedVsTruth.equal()).as("%s", replayedVsTruth).isTrue();
            assertThat(first.computed()).isEqualTo(inRange.size());
            assertThat(first.written()).isEqualTo(inRange.size());

            // Again: the same values and vers, so every write is refused as stale and nothing changes.
            ReplayReport again = replay(world, range, "--container=replayed");
            assertThat(again.complete()).isTrue();
            assertThat(again.written()).isZero();
            assertThat(again.unchanged()).isEqualTo(inRange.size());
            assertThat(world.stored("replayed")).as("not even updatedAt moved").isEqualTo(replayed);

            // One rule only, into another container: the documents holding its grades (whole: a document holds every
            // grade of its entity bucket), equal to the live ones, and no other.
            ReplayReport emails = replay(world, range, "--container=emails", "--rules=orders-per-email");
            assertThat(emails.complete()).isTrue();
            Map<String, JsonNode> emailDocs = world.stored("emails");
            assertThat(emailDocs.keySet()).isNotEmpty().isEqualTo(inRange.keySet().stream()
                    .filter(k -> holds(inRange.get(mainKey(inRange.get(k))), "orders-per-email")).collect(java.util.stream.Collectors.toSet()));
            emailDocs.forEach((key, doc) -> assertThat(values(doc)).as(key).isEqualTo(values(inRange.get(key))));

            // Over the live container: a correct document is left alone, an under-counted one is corrected.
            String victim = inRange.keySet().stream().filter(k -> inRange.get(k).path("grades").size() > 0).findFirst().orElseThrow();
            underCount(world, inRange.get(victim));
            ReplayReport repair = replay(world, range);
            assertThat(repair.complete()).isTrue();
            assertThat(repair.written()).isEqualTo(1);
            assertThat(repair.unchanged()).isEqualTo(inRange.size() - 1);
            assertThat(values(world.stored("buckets").get(victim))).isEqualTo(values(inRange.get(victim)));

            // Writes that cannot complete (Cosmos answers 503 to every bulk request) make the job fail, not hang.
            String rule = cosmos.control().injectFault(CosmosControl.Fault.status(503).kind("batch")
                    .pathPrefix("/dbs/" + world.database + "/colls/unavailable"));
            try {
                ReplayReport stuck = replay(world, range, "--container=unavailable", "--replay.write-timeout.ms=3000");
                assertThat(stuck.complete()).isFalse();
                assertThat(stuck.exitCode()).isEqualTo(ReplayJob.EXIT_FAILED);
                assertThat(stuck.incomplete()).isEqualTo(inRange.size());
                assertThat(stuck.format()).contains("replay did NOT finish").contains("not written");
            } finally {
                cosmos.control().removeFault(rule);
            }
        }
    }

    @Test
    void aRangeTheTopicNoLongerRetainsIsRefusedWithAClearMessage(TestKafka kafka, LocalSchemaRegistry registry, @TempDir Path dir)
            throws Exception {
        try (ReplayWorld world = new ReplayWorld(kafka, registry, null, "retention")) {
            Loadgen.Summary run = Loadgen.run(world.loadgen(world.topics.transactions(), dir.resolve("truth.json"),
                    "--loadgen.events=300", "--loadgen.customers=10"));
            assertThat(run.failed()).isZero();
            try (Admin admin = kafka.admin()) {
                admin.deleteRecords(Map.of(new TopicPartition(world.topics.transactions(), 1), RecordsToDelete.beforeOffset(10)))
                        .all().get();
            }
            Instant from = Instant.now().minus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS);
            List<String> args = world.commonFlags("--from=" + from, "--include-open-buckets",
                    "--to=" + Instant.now().truncatedTo(ChronoUnit.SECONDS));
            ReplaySettings settings = ReplaySettings.load(args.toArray(String[]::new), Map.of(), Instant.now());
            String partition = world.topics.transactions() + "-1";
            assertThatThrownBy(() -> new ReplayJob(settings).run())
                    .isInstanceOfSatisfying(ReplayException.class, e -> assertThat(e.exitCode()).isEqualTo(ReplayJob.EXIT_RETENTION_LOST))
                    .hasMessageContaining("no longer retains the start of the range")
                    .hasMessageContaining(partition + ": its earliest retained record (offset 10) has timestamp")
                    .hasMessageContaining("after the requested start " + from.minus(Duration.ofMinutes(5)))
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(world.topics.transactions() + "-0"));

            // The jar's entry point, as `./tally replay` runs it, says so on stderr and exits non-zero.
            Path log = dir.resolve("replay-main.log");
            List<String> command = new ArrayList<>(List.of("replay"));
            command.addAll(args);
            try (ChildJvm main = ChildJvm.start(Main.class, command, Map.of(), log)) {
                long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
                while (main.isAlive() && System.nanoTime() < deadline) Thread.sleep(100);
                assertThat(main.isAlive()).as("replay ends by itself").isFalse();
                assertThat(main.stop(Duration.ofSeconds(5))).isEqualTo(ReplayJob.EXIT_RETENTION_LOST);
                assertThat(Files.readString(log)).contains("replay: the topic no longer retains the start of the range")
                        .contains(partition);
            }
        }
    }

    @Test
    void aRecordingKeptOutsideKafkaReplaysIntoItsGroundTruth(TestKafka kafka, LocalSchemaRegistry registry, LocalCosmos cosmos,
                                                            @TempDir Path dir) throws Exception {
        Path recording = dir.resolve("history.avro");
        try (ReplayWorld world = new ReplayWorld(kafka, registry, cosmos, "file")) {
            // Recorded from a topic the pipeline never reads: the history lives only in the file.
            String elsewhere = world.prefix + "recorded-elsewhere";
            kafka.createTopics(List.of(TestKafka.topic(elsewhere, 3, Map.of())));
            Loadgen.Summary recorded = Loadgen.run(world.loadgen(elsewhere, dir.resolve("recorded-truth.json"),
                    "--loadgen.events=1500", "--loadgen.customers=30", "--loadgen.duplicate.fraction=0.05",
                    "--loadgen.late.fraction=0.01", "--loadgen.future.fraction=0.01", "--loadgen.invalid.fraction=0.01",
                    "--loadgen.malformed.fraction=0.01", "--loadgen.record-file=" + recording));
            assertThat(recorded.failed()).isZero();

            try (IngestApp live = new IngestApp(world.liveSettings(dir.resolve("state")))) {
                live.start();
                Loadgen.Summary replayed = Loadgen.run(world.loadgen(world.topics.transactions(), dir.resolve("replay-truth.json"),
                        "--loadgen.mode=replay", "--loadgen.replay-file=" + recording, "--loadgen.replay.speed=0"));
                assertThat(replayed.failed()).isZero();
                assertThat(replayed.acknowledged()).isEqualTo(recorded.recorded());
                GroundTruth truth = replayed.truth().orElseThrow();
                assertThat(truth.documents()).isPositive();
                // Every bucket of the truth, every field, and no bucket beyond it.
                world.awaitEqual(GroundTruthJudge.of(truth), "buckets", DRAIN);
            }
        }
    }

    private static ReplayReport replay(ReplayWorld world, ReplayRange range, String... extra) throws InterruptedException {
        List<String> args = world.commonFlags("--from=" + range.from(), "--to=" + range.to(), "--include-open-buckets",
                "--replay.progress-interval.ms=500");
        args.addAll(List.of(extra));
        ReplayReport report = new ReplayJob(ReplaySettings.load(args.toArray(String[]::new), Map.of(), Instant.now())).run();
        System.out.print(report.format());
        return report;
    }

    /** The live run lost the last event of one of the document's grades: one version and one count lower, sum zeroed. */
    private static void underCount(ReplayWorld world, JsonNode doc) {
        ObjectNode worse = doc.deepCopy();
        ArrayNode grade = (ArrayNode) worse.get("grades").elements().next(); // [count, sum, min, max]
        worse.put("ver", doc.get("ver").asLong() - 1);
        grade.set(0, grade.numberNode(grade.get(0).asLong() - 1));
        // Only a sum the rule keeps can be short: a write sets the aggregations its rule keeps and no others.
        if (grade.size() > 1 && grade.get(1).isTextual()) grade.set(1, grade.textNode("0"));
        world.client().getDatabase(world.database).getContainer("buckets")
                .upsertItem(worse, new PartitionKey(doc.get("pk").asText()), null).block(Duration.ofSeconds(30));
    }

    /** id = unit|bucketIndex, or unit|bucketIndex|rule|page for a spill page. */
    private static boolean inside(ReplayRange range, JsonNode doc) {
        String[] parts = doc.get("id").asText().split("\\|");
        return range.containsBucket(TimeUnit.fromCode(parts[0]), Long.parseLong(parts[1]));
    }

    /** A grade bucket's id, grade|unit|bucketIndex, split from the right: a qualifier value may hold a bar. */
    private static boolean gradeInside(ReplayRange range, String id) {
        int last = id.lastIndexOf('|');
        int unitAt = id.lastIndexOf('|', last - 1);
        TimeUnit unit = TimeUnit.fromCode(id.substring(unitAt + 1, last));
        long index = Long.parseLong(id.substring(last + 1));
        // an unqualified minute grade lives in its hour: a replay writes it only when the whole hour is in range
        if (unit == TimeUnit.MINUTE && id.substring(0, unitAt).indexOf(':') < 0) {
            return range.containsBucket(TimeUnit.HOUR, Math.floorDiv(index, 60));
        }
        return range.containsBucket(unit, index);
    }

    /** The key (pk|id) of the main document of {@code doc}'s entity bucket: a spill page's id less its rule and page. */
    private static String mainKey(JsonNode doc) {
        String[] id = doc.get("id").asText().split("\\|");
        return doc.get("pk").asText() + "|" + id[0] + "|" + id[1];
    }

    private static boolean holds(JsonNode main, String rule) {
        return main != null && (main.path("grades").has(rule) || main.path("qualified").has(rule) || main.path("spilled").has(rule)
                || main.path("minutes").has(rule));
    }

    /** The values a replay must reproduce; updatedAt and Cosmos' system fields excluded. */
    private static String values(JsonNode doc) {
        List<String> out = new ArrayList<>();
        for (String f : List.of("pk", "id", "unit", "bucket", "rule", "page", "ver", "ttl", "grades", "qualified", "spilled", "minutes")) {
            out.add(f + "=" + canonical(doc.get(f)));
        }
        return String.join(" ", out);
    }

    /** Numbers by value, objects by sorted field name: what a value is, not how it was spelled. */
    private static String canonical(JsonNode v) {
        if (v == null || v.isNull()) return "-";
        if (v.isNumber()) return v.decimalValue().stripTrailingZeros().toPlainString();
        if (!v.isObject()) return v.asText();
        Map<String, String> fields = new TreeMap<>();
        v.fields().forEachRemaining(e -> fields.put(e.getKey(), canonical(e.getValue())));
        return fields.toString();
    }

    private static Map<String, Long> rejectedByReason(ReplayReport r) {
        Map<String, Long> out = new HashMap<>();
        r.rejected().forEach((reason, n) -> out.put(reason.name(), n));
        return out;
    }

    private static Map<String, Long> nonZero(Map<String, Long> counts) {
        Map<String, Long> out = new HashMap<>();
        counts.forEach((k, v) -> { if (v != 0) out.put(k, v); });
        return out;
    }
}
