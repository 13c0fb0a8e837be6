package io.tally.tests.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.IngestNode;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Invariants 1 and 2 through crashes: the aggregation and the sink run in separate JVMs and are killed
 * with SIGKILL at random moments while loadgen produces (six cycles: each role at least twice, both
 * at once at least once), each restarted after a random pause. After the input drains every bucket in
 * Cosmos equals loadgen's ground truth, the DLQ holds exactly the records it expects, and no stored
 * version ever went backwards. The random seed is logged, and can be pinned with -Dtally.kill.seed.
 */
@ExtendWith(LocalStackExtension.class)
class KillCyclesIT {
    private static final Logger log = LoggerFactory.getLogger(KillCyclesIT.class);

    @Test
    void sigkillOfAggregationAndSinkAtRandomPointsLosesAndDoublesNothing(TestKafka kafka, LocalSchemaRegistry registry,
                                                                          LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        long seed = Long.getLong("tally.kill.seed", System.nanoTime());
        Random random = new Random(seed);
        log.info("kill cycles with seed {} (-Dtally.kill.seed={} repeats them)", seed, seed);
        try (Pipeline p = new Pipeline("kills", kafka.bootstrapServers(), registry, cosmos, dir).provisionTopics()) {
            IngestNode aggregator = p.start("aggregator", "aggregate");
            IngestNode sink = p.start("sink", "sink");
            try (Pipeline.VersionWatch watch = p.watchVersions()) {
                p.awaitReady(Pipeline.START_TIMEOUT);
                CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(p.loadgen(15_000, 300, seed));
                p.awaitFlowing(Pipeline.START_TIMEOUT);

                List<List<IngestNode>> victims = new ArrayList<>(List.of(List.of(aggregator), List.of(sink), List.of(aggregator, sink),
                        List.of(aggregator), List.of(sink), random.nextBoolean() ? List.of(aggregator) : List.of(sink)));
                Collections.shuffle(victims, random);
                List<String> done = new ArrayList<>();
                for (List<IngestNode> cycle : victims) {
                    Thread.sleep(1_500 + random.nextInt(3_500));
                    cycle.forEach(IngestNode::kill);
                    Thread.sleep(200 + random.nextInt(1_500));
                    cycle.forEach(IngestNode::start);
                    done.add(cycle.stream().map(n -> n.name).toList() + (produced.isDone() ? " (input complete)" : ""));
                }
                log.info("SIGKILL cycles: {}", done);
                Pipeline.Truth truth = produced.get(3, TimeUnit.MINUTES);
                truth.assertExercisesEverything();
                assertThat(aggregator.starts()).as("aggregator starts").isGreaterThanOrEqualTo(3);
                assertThat(sink.starts()).as("sink starts").isGreaterThanOrEqualTo(3);

                Duration tail = p.awaitConverged(truth, Duration.ofSeconds(240));
                log.info("kill cycles: {} records, {} buckets, {} duplicates, DLQ {}; converged {} s after the input ended",
                        truth.summary().acknowledged(), truth.buckets().size(), truth.duplicates(), truth.nonZeroDlq(), tail.toSeconds());
                assertThat(watch.samples()).as("the version watch observed the container").isPositive();
                assertThat(watch.regressions()).as("a stored version went backwards").isEmpty();
            }
        }
    }
}
