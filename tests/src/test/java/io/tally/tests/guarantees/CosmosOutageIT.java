package io.tally.tests.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.CosmosControl.Fault;
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
 * Invariant 1 through a Cosmos outage of 60 s: every request to the test's database is answered 503
 * while events keep arriving. The aggregation is not affected (it never talks to Cosmos); the sink's
 * writes pass their retry bound, it stalls without committing, and once Cosmos answers again it
 * catches up: every bucket equals the ground truth, the DLQ holds exactly the expected records and
 * nothing went to the bucket-updates DLQ.
 */
@ExtendWith(LocalStackExtension.class)
class CosmosOutageIT {
    private static final Logger log = LoggerFactory.getLogger(CosmosOutageIT.class);
    static final Duration OUTAGE = Duration.ofSeconds(60);

    @Test
    void aSixtySecondCosmosOutageEndsWithEveryBucketEqualToTheTruth(TestKafka kafka, LocalSchemaRegistry registry,
                                                                    LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        CosmosControl control = cosmos.control();
        String rule = null;
        try (Pipeline p = new Pipeline("outage", kafka.bootstrapServers(), registry, cosmos, dir).provisionTopics()) {
            IngestNode node = p.start("ingest", "both");
            try (Pipeline.VersionWatch watch = p.watchVersions()) {
                // ~80 s of input at 150/s: it starts before the outage, runs through it and ends after it.
                p.awaitReady(Pipeline.START_TIMEOUT);
                CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(p.loadgen(12_000, 150, 61));
                p.awaitFlowing(Pipeline.START_TIMEOUT);
                rule = control.injectFault(Fault.status(503).pathPrefix("/dbs/" + p.database).duration(OUTAGE));
                long outageStart = System.nanoTime();
                // The heap it keeps while every write fails and the backlog deepens, measured after a full GC each
                // quarter of the outage: the in-flight bound must cover the SDK's failures too (once, 200,000 retried
                // operations filled a 1 GB heap here).
                long peakLiveHeap = 0;
                for (int quarter = 0; quarter < 4; quarter++) {
                    Thread.sleep(OUTAGE.toMillis() / 4);
                    peakLiveHeap = Math.max(peakLiveHeap, node.liveHeapBytes());
                }
                log.info("outage: peak live heap {} MB (heap 1 GB)", peakLiveHeap >> 20);
                assertThat(peakLiveHeap).as("live heap during the outage, bytes").isPositive().isLessThan(512L << 20);
                int hits = control.faultHits(rule);
                double retriesDuring = node.metric("tally_sink_retries_total");
                log.info("outage: {} requests answered 503 in {} s; sink retries so far {}", hits, OUTAGE.toSeconds(), (long) retriesDuring);
                assertThat(hits).as("the outage hit the sink").isPositive();
                assertThat(node.isAlive()).as("ingest-app survived the outage\n%s", node.logTail()).isTrue();

                Pipeline.Truth truth = produced.get(3, TimeUnit.MINUTES);
                truth.assertExercisesEverything();
                Duration after = p.awaitConverged(truth, Duration.ofSeconds(240));
                log.info("outage: {} records, {} buckets, {} duplicates; converged {} s after the input ended, {} s after the outage began",
                        truth.summary().acknowledged(), truth.buckets().size(), truth.duplicates(), after.toSeconds(),
                        Duration.ofNanos(System.nanoTime() - outageStart).toSeconds());
                assertThat(node.metric("tally_sink_documents_written_total", "outcome=\"dead_lettered\""))
                        .as("no bucket update given up on").isZero();
                assertThat(watch.regressions()).as("a stored version went backwards").isEmpty();
            }
        } finally {
            if (rule != null) control.removeFault(rule);
        }
    }
}
