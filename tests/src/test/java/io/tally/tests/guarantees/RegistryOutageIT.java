package io.tally.tests.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.net.TcpProxy;
import io.tally.testsupport.pipeline.IngestNode;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schema registry unreachable for 30 s while events keep arriving: the aggregation (its own instance, registry
 * reached through a proxy the test cuts) cannot decode a record whose schema it has not cached yet, so its stream
 * thread fails. It must back off (bounded exponential, ingest.restart-backoff.*) instead of replacing the thread in a
 * tight loop, say so on /health/ready and /metrics, resume by itself when the registry is back, and leave every
 * bucket equal to the ground truth, with nothing dead-lettered that should not be.
 *
 * <p>The outage starts before the first record arrives, so nothing is cached and every record needs the registry.
 */
@ExtendWith(LocalStackExtension.class)
class RegistryOutageIT {
    private static final Logger log = LoggerFactory.getLogger(RegistryOutageIT.class);
    static final Duration OUTAGE = Duration.ofSeconds(30);
    static final String FAILURES = "tally_ingest_stream_thread_failures_total";
    /** The first wait: 3 s, so that polling readiness twice a second cannot miss it. */
    static final Duration INITIAL_WAIT = Duration.ofSeconds(3);
    /**
     * Waits of 3, 6, 12, 24 s fill 45 s, so even failures that took no time at all (no client retries, no rejoin) fit
     * at most 4 into 30 s.
     */
    static final int MOST_FAILURES = 4;

    @Test
    void aThirtySecondRegistryOutageBacksOffRecoversByItselfAndEveryBucketIsRight(TestKafka kafka, LocalSchemaRegistry registry,
                                                                                  LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        URI real = URI.create(registry.url());
        try (TcpProxy proxy = new TcpProxy(real.getHost(), real.getPort());
             Pipeline p = new Pipeline("registry-outage", kafka.bootstrapServers(), registry, cosmos, dir).provisionTopics()) {
            IngestNode agg = p.start("agg", "aggregate", "--schema.registry.url=http://127.0.0.1:" + proxy.port(),
                    "--ingest.restart-backoff.initial.ms=" + INITIAL_WAIT.toMillis());
            p.start("sink", "sink");
            p.awaitReady(Pipeline.START_TIMEOUT);
            assertThat(agg.readiness().status()).as("an aggregate-only instance answers /health/ready: %s", agg.readiness()).isEqualTo(200);
            assertThat(agg.metrics().keySet()).as("an aggregate-only instance serves /metrics, the stream-thread failures with it")
                    .anyMatch(k -> k.startsWith(FAILURES + "{")).anyMatch(k -> k.startsWith("kafka_stream_"));

            proxy.down();
            long outageStart = System.nanoTime();
            // 6,000 events at 150/s: 40 s, so records keep arriving through the outage and after it.
            CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(p.loadgen(6_000, 150, 16));
            List<String> seen = new ArrayList<>();
            boolean backingOffSeen = false;
            while (System.nanoTime() - outageStart < OUTAGE.toNanos()) {
                IngestNode.Readiness r = agg.readiness();
                if (r.status() == 503 && r.body().contains("\"backing-off\"") && r.body().contains("registry-unavailable")) backingOffSeen = true;
                if (seen.isEmpty() || !seen.get(seen.size() - 1).equals(r.status() + " " + r.body())) seen.add(r.status() + " " + r.body());
                Thread.sleep(500);
            }
            double failuresDuringOutage = agg.metric(FAILURES, "registry-unavailable");
            double consecutive = agg.metric("tally_ingest_stream_thread_consecutive_failures");
            proxy.up();
            long back = System.nanoTime();
            log.info("registry outage {} s: {} stream-thread failures (registry-unavailable), consecutive {}; readiness seen: {}",
                    OUTAGE.toSeconds(), (long) failuresDuringOutage, (long) consecutive, seen);

            assertThat(failuresDuringOutage).as("the outage was felt: the stream thread failed\n%s", agg.logTail()).isGreaterThanOrEqualTo(1);
            assertThat(failuresDuringOutage).as("bounded restarts during a %d s outage\n%s", OUTAGE.toSeconds(), agg.logTail())
                    .isLessThanOrEqualTo(MOST_FAILURES);
            assertThat(consecutive).as("/metrics shows the series of failures").isGreaterThanOrEqualTo(1);
            assertThat(backingOffSeen).as("/health/ready said 503 backing-off with the cause; seen: %s", seen).isTrue();

            Pipeline.Truth truth = produced.get(3, TimeUnit.MINUTES);
            Duration converged = p.awaitConverged(truth, Duration.ofSeconds(240));
            log.info("registry outage: every bucket and the DLQ right {} s after the registry came back",
                    Duration.ofNanos(System.nanoTime() - back).toSeconds());
            assertThat(agg.starts()).as("recovered by itself: the process was never restarted").isEqualTo(1);
            assertThat(agg.isAlive()).isTrue();
            assertThat(agg.readiness().status()).as("ready again: %s", agg.readiness()).isEqualTo(200);
            assertThat(agg.metric(FAILURES, "other")).as("no failure other than the registry's\n%s", agg.logTail()).isZero();
            assertThat(converged).isNotNull();
        }
    }
}
