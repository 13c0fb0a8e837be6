package io.tally.tests.sources;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.ingest.replay.ReplayJob;
import io.tally.ingest.replay.ReplayRange;
import io.tally.ingest.replay.ReplayReport;
import io.tally.ingest.replay.ReplaySettings;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.process.Processes;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two topics with two different schemas into one container, through the shipped two-schema mapping
 * (rules/two-schema-sources.yaml): Tally's TransactionEvent on {@code transactions} and a shop's nested OrderEvent on
 * {@code orders} (customer inside a record, cents as a long, the time as an ISO string, the status an enum). Loadgen
 * sends half its events as orders, every kind of bad record on both topics, and computes the ground truth with its
 * own code from the logical events. After the input drains every bucket equals that truth, whichever topic its
 * events came through, and the DLQ holds exactly the broken records by reason. A replay of both topics into a new
 * container then writes the same documents for every bucket wholly inside its range.
 */
@ExtendWith(LocalStackExtension.class)
class TwoSchemaSourcesIT {
    private static final Path SOURCES = Processes.repoRoot().resolve("rules/two-schema-sources.yaml");

    @Test
    void eventsOfBothSchemasCountIntoTheSameBucketsExactlyOnceAndReplayAlike(TestKafka kafka, LocalSchemaRegistry registry,
                                                                             LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        try (Pipeline p = new Pipeline("two-schemas", kafka.bootstrapServers(), registry, cosmos, dir)
                .withSources(SOURCES, "transactions", "orders").provisionTopics()) {
            String orders = p.eventTopics().get(1);
            p.start("ingest", "both");
            p.awaitReady(Pipeline.START_TIMEOUT);
            Pipeline.Truth truth = p.produceInBackground(p.loadgen(6_000, 0, 26,
                    "--loadgen.orders.topic=" + orders, "--loadgen.orders.share=0.5")).get();
            truth.assertExercisesEverything();
            Map<String, Long> byTopic = truth.summary().acknowledgedByTopic();
            assertThat(byTopic.get(orders)).as("records sent as orders, of %s", byTopic).isBetween(2_400L, 3_600L);
            p.awaitConverged(truth, Duration.ofMinutes(4));

            ReplayReport report = new ReplayJob(ReplaySettings.load(p.replayFlags(
                    "--from=" + Instant.now().minus(Duration.ofDays(1)).truncatedTo(ChronoUnit.DAYS),
                    "--to=" + Instant.now().truncatedTo(ChronoUnit.SECONDS), "--include-open-buckets",
                    "--container=replayed").toArray(String[]::new), Map.of(), Instant.now())).run();
            assertThat(report.complete()).as(report.format()).isTrue();
            // A replay rebuilds the buckets wholly inside its range; today's day buckets reach beyond it.
            Map<String, JsonNode> live = comparable(p.stored());
            live.values().removeIf(d -> !inside(report.range(), d));
            assertThat(live).as("live documents inside the replayed range").hasSizeGreaterThan(1_000);
            Map<String, JsonNode> replayed = comparable(p.stored("replayed"));
            assertThat(differences(live, replayed)).as("documents live vs replayed from both topics (%s)", report.format()).isEmpty();
        }
    }

    private static boolean inside(ReplayRange range, JsonNode doc) {
        String[] id = doc.get("id").asText().split("\\|");
        return range.containsBucket(TimeUnit.fromCode(id[0]), Long.parseLong(id[1]));
    }

    /** The first differences between two sets of documents, each naming its key: missing, extra or different. */
    private static List<String> differences(Map<String, JsonNode> expected, Map<String, JsonNode> actual) {
        List<String> out = new java.util.ArrayList<>();
        expected.forEach((k, v) -> {
            JsonNode a = actual.get(k);
            if (a == null) out.add("missing " + k + ": " + v);
            else if (!a.equals(v)) out.add("different " + k + ": expected " + v + " but was " + a);
        });
        actual.keySet().stream().filter(k -> !expected.containsKey(k)).forEach(k -> out.add("extra " + k + ": " + actual.get(k)));
        return out.subList(0, Math.min(out.size(), 10));
    }

    /** The documents without what differs between any two writes of the same content (Cosmos metadata, updatedAt). */
    private static Map<String, JsonNode> comparable(Map<String, JsonNode> docs) {
        Map<String, JsonNode> out = new TreeMap<>();
        docs.forEach((k, d) -> {
            ObjectNode c = d.deepCopy();
            c.remove(List.of("_rid", "_self", "_etag", "_attachments", "_ts", "updatedAt"));
            out.put(k, c);
        });
        return out;
    }
}
