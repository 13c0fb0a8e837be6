package io.tally.tests.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.KafkaBrokerProcess;
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
 * Invariants 1 and 2 through a broker restart: the test runs its own broker process (the shared test
 * broker cannot be restarted), kills it with SIGKILL while loadgen produces and the aggregation and
 * sink run in their own JVMs, and starts it again on the same log directory and ports. Producers,
 * Streams and the sink reconnect; open transactions abort; every bucket ends equal to the ground truth.
 */
@ExtendWith(LocalStackExtension.class)
class BrokerRestartIT {
    private static final Logger log = LoggerFactory.getLogger(BrokerRestartIT.class);
    private static final Duration DOWN = Duration.ofSeconds(5);

    @Test
    void aBrokerKilledAndRestartedMidStreamLosesAndDoublesNothing(LocalSchemaRegistry registry, LocalCosmos cosmos,
                                                                  @TempDir Path dir) throws Exception {
        try (KafkaBrokerProcess broker = KafkaBrokerProcess.start(dir.resolve("broker"));
             Pipeline p = new Pipeline("broker", broker.bootstrapServers(), registry, cosmos, dir).provisionTopics()) {
            IngestNode aggregator = p.start("aggregator", "aggregate");
            IngestNode sink = p.start("sink", "sink");
            try (Pipeline.VersionWatch watch = p.watchVersions()) {
                p.awaitReady(Pipeline.START_TIMEOUT);
                CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(p.loadgen(12_000, 250, 91));
                p.awaitFlowing(Pipeline.START_TIMEOUT);
                Thread.sleep(3_000);
                long t0 = System.nanoTime();
                broker.kill();
                log.info("broker killed (SIGKILL) mid-stream; {} input complete: {}", p.bootstrap, produced.isDone());
                Thread.sleep(DOWN.toMillis());
                broker.start();
                log.info("broker back after {} ms (down {} s + start)", (System.nanoTime() - t0) / 1_000_000, DOWN.toSeconds());

                Pipeline.Truth truth = produced.get(4, TimeUnit.MINUTES);
                truth.assertExercisesEverything();
                Duration after = p.awaitConverged(truth, Duration.ofSeconds(240));
                log.info("broker restart: {} records, {} buckets, {} duplicates; converged {} s after the input ended",
                        truth.summary().acknowledged(), truth.buckets().size(), truth.duplicates(), after.toSeconds());
                assertThat(aggregator.isAlive()).as("the aggregation outlived the broker restart\n%s", aggregator.logTail()).isTrue();
                assertThat(sink.isAlive()).as("the sink outlived the broker restart\n%s", sink.logTail()).isTrue();
                assertThat(watch.regressions()).as("a stored version went backwards").isEmpty();
            }
        }
    }
}
