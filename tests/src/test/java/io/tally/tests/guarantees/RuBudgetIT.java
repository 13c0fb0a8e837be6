package io.tally.tests.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.IngestNode;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Invariants 1 and 4 under an RU budget below demand: the pipeline's RU rate is measured while it
 * runs unthrottled, then the container gets half of it. Cosmos answers 429 to what exceeds the
 * budget; the sink backs off and coalesces more (it writes each bucket's newest value only), and every
 * bucket still converges to the ground truth.
 */
@ExtendWith(LocalStackExtension.class)
class RuBudgetIT {
    private static final Logger log = LoggerFactory.getLogger(RuBudgetIT.class);
    private static final Duration MEASURE = Duration.ofSeconds(10);

    @Test
    void halfTheDemandedThroughputThrottlesButEveryBucketConverges(TestKafka kafka, LocalSchemaRegistry registry,
                                                                   LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        CosmosControl control = cosmos.control();
        try (Pipeline p = new Pipeline("ru", kafka.bootstrapServers(), registry, cosmos, dir).provisionTopics()) {
            IngestNode node = p.start("ingest", "both");
            try {
                p.awaitReady(Pipeline.START_TIMEOUT);
                CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(p.loadgen(6_000, 150, 71));
                p.awaitFlowing(Pipeline.START_TIMEOUT);
                double ru0 = node.metric("tally_sink_request_units_total");
                Thread.sleep(MEASURE.toMillis());
                double demand = (node.metric("tally_sink_request_units_total") - ru0) / MEASURE.toSeconds();
                double budget = Math.max(100, Math.round(demand / 2));
                control.setThroughput(p.database, "buckets", budget);
                log.info("RU budget: demand {} RU/s measured over {} s unthrottled; container set to {} RU/s",
                        Math.round(demand), MEASURE.toSeconds(), Math.round(budget));
                double throttled0 = node.metric("tally_sink_throttled_total");
                double ruBefore = node.metric("tally_sink_request_units_total");
                long t0 = System.nanoTime();

                Pipeline.Truth truth = produced.get(3, TimeUnit.MINUTES);
                truth.assertExercisesEverything();
                Duration after = p.awaitConverged(truth, Duration.ofSeconds(240));
                double seconds = (System.nanoTime() - t0) / 1e9;
                double throttled = node.metric("tally_sink_throttled_total") - throttled0;
                double ru = node.metric("tally_sink_request_units_total") - ruBefore;
                log.info("RU budget: {} operations answered 429 under the budget; {} RU in {} s = {} RU/s ({}% of the budget); "
                                + "{} records, {} buckets; converged {} s after the input ended",
                        Math.round(throttled), Math.round(ru), Math.round(seconds), Math.round(ru / seconds),
                        Math.round(100 * ru / seconds / budget), truth.summary().acknowledged(), truth.buckets().size(), after.toSeconds());
                assertThat(throttled).as("the budget pushed back with 429s").isPositive();
            } finally {
                control.setThroughput(p.database, "buckets", null);
            }
        }
    }
}
