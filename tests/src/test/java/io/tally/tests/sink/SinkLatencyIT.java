package io.tally.tests.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.search.Search;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.sink.SinkMetrics;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.CosmosControl.Fault;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.sink.SinkRun;
import java.time.Duration;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink while every Cosmos request of its database takes {@code delay} ms longer (a delay-only fault rule
 * scoped to the test's database): it still converges to the newest version of every bucket, and the
 * Little's-law estimate (tally_sink_target_concurrency) sees the latency and the concurrency limit rises above
 * its initial value. Why the estimate must exceed the initial 2: with calls of at most 100 operations
 * (sink.bulk.chunk-size=100, one micro-batch, which also makes enough calls for the estimate from a small
 * backlog), every call takes at least {@code delay}, so at the default sink.target-rate of 20,000 documents/s
 * more than 20,000 x 0.01 s / 100 = 2 calls are needed in flight at 10 ms (10 at 50 ms), whatever the
 * machine's speed. No timing is asserted.
 */
@ExtendWith(LocalStackExtension.class)
class SinkLatencyIT {
    private static final Logger log = LoggerFactory.getLogger(SinkLatencyIT.class);
    private static final int INITIAL = 2;

    private static double gauge(SinkMetrics m, String name) {
        return Search.in(m.registry()).name(name).gauge().value();
    }

    @ParameterizedTest(name = "{0} ms added")
    @CsvSource({"10, 1500, 2", "50, 800, 1"})
    void hidesAddedLatencyWithMoreCallsInFlight(int delay, int buckets, int versions, TestKafka kafka, LocalCosmos cosmos)
            throws Exception {
        CosmosControl control = cosmos.control();
        try (SinkRun run = new SinkRun(kafka, cosmos, "latency" + delay);
             IngestApp sink = new IngestApp(run.settings("--sink.concurrency.initial=" + INITIAL, "--sink.bulk.chunk-size=100"))) {
            String rule = control.injectFault(Fault.delay(delay).pathPrefix("/dbs/" + run.database));
            try {
                run.produce(buckets, 1, versions);
                sink.start();
                // The highest limit, sampled while the sink works: on a loaded machine calls may also queue at the endpoint,
                // which cuts the limit again (a congestion signal), so the value at the end proves less.
                int limit = run.highestWhileAwaitingAllCorrect(() -> sink.sink().writer().concurrencyLimit(), Duration.ofSeconds(60));
                SinkMetrics m = sink.sink().metrics();
                double latency = gauge(m, "tally.sink.call.latency.seconds");
                double target = gauge(m, "tally.sink.target.concurrency");
                log.info("{} ms added: median bulk call {} ms, Little's-law target {} calls, highest limit {} (initial {})", delay,
                        Math.round(latency * 1000), target, limit, INITIAL);
                assertThat(control.faultHits(rule)).as("the delay rule hit the sink's requests").isPositive();
                assertThat(latency).as("the estimate sees the added delay").isGreaterThanOrEqualTo(delay / 1000.0);
                assertThat(target).as("calls needed in flight at this latency").isGreaterThan(INITIAL);
                assertThat(limit).as("the limit rose toward the estimate").isGreaterThan(INITIAL);
            } finally {
                control.removeFault(rule);
            }
        }
    }
}
