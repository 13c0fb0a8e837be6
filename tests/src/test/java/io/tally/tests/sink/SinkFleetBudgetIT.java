package io.tally.tests.sink;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.IngestNode;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RU budget for the fleet: three sink processes share {@code sink.ru-budget} through the SDK's global throughput
 * control ({@code sink.ru-budget.fleet-control-container}). With a backlog far above the budget, the request units the
 * endpoint charges for their bulk writes stay within 10% of the budget; after one sink is killed (SIGKILL, so it never
 * says goodbye), the other two use its share once its lease item expires: within 10% of the budget again.
 *
 * <p>A private endpoint without a throughput limit of its own: what the sinks spend is what they chose to spend, and no
 * other test's traffic is counted.
 */
class SinkFleetBudgetIT {
    private static final Logger log = LoggerFactory.getLogger(SinkFleetBudgetIT.class);
    static final int BUDGET = 600;
    static final Duration WARM_UP = Duration.ofSeconds(25);
    static final Duration WINDOW = Duration.ofSeconds(20);
    /** Lease expiry (11 s) plus one renew interval (5 s) of the survivors, plus slack. */
    static final Duration TAKE_OVER = Duration.ofSeconds(20);

    @Test
    void threeSinksShareOneBudgetAndTheSurvivorsTakeOverAKilledOnesShare(@TempDir Path dir) throws Exception {
        LocalCosmos cosmos = LocalCosmos.startPrivate();
        CosmosControl control = cosmos.control();
        try (Pipeline p = new Pipeline("fleet", TestKafka.get().bootstrapServers(), LocalSchemaRegistry.get(), cosmos, dir)) {
            p.provisionTopics();
            p.start("agg", "aggregate");
            String[] budget = {"--sink.ru-budget=" + BUDGET, "--sink.ru-budget.fleet-control-container=tally-throughput-control"};
            List<IngestNode> sinks = List.of(p.start("sink-1", "sink", budget), p.start("sink-2", "sink", budget),
                    p.start("sink-3", "sink", budget));
            p.awaitReady(Pipeline.START_TIMEOUT);
            p.produceInBackground(p.loadgen(60_000, 500, 91));

            Thread.sleep(WARM_UP.toMillis());
            double three = measure(control, sinks, "three sinks");

            sinks.get(2).kill();
            Thread.sleep(TAKE_OVER.toMillis());
            double two = measure(control, sinks.subList(0, 2), "two sinks after one was killed");

            assertThat(three).as("RU/s of three sinks against a fleet budget of %d", BUDGET).isBetween(BUDGET * 0.9, BUDGET * 1.1);
            assertThat(two).as("RU/s of the two survivors, %s after the kill", TAKE_OVER).isBetween(BUDGET * 0.9, BUDGET * 1.1);
        }
    }

    /** RU/s the endpoint charged for bulk writes over {@link #WINDOW}, with the sinks' own figures logged beside it. */
    static double measure(CosmosControl control, List<IngestNode> sinks, String what) throws InterruptedException {
        double[] ru0 = new double[sinks.size()];
        double[] thr0 = new double[sinks.size()];
        double[] ops0 = new double[sinks.size()];
        for (int i = 0; i < sinks.size(); i++) {
            ru0[i] = sinks.get(i).metric("tally_sink_request_units_total");
            thr0[i] = sinks.get(i).metric("tally_sink_throttled_total");
            ops0[i] = sinks.get(i).metric("tally_sink_operations_sent_total");
        }
        control.resetStats();
        Thread.sleep(WINDOW.toMillis());
        JsonNode stats = control.stats().raw();
        double seconds = stats.path("elapsedMs").asDouble() / 1000;
        double ruPerSecond = stats.path("requestChargeByKind").path("batch").asDouble() / seconds;
        StringBuilder perSink = new StringBuilder();
        double throttled = 0;
        double sent = 0;
        for (int i = 0; i < sinks.size(); i++) {
            IngestNode s = sinks.get(i);
            double ru = (s.metric("tally_sink_request_units_total") - ru0[i]) / seconds;
            throttled += s.metric("tally_sink_throttled_total") - thr0[i];
            sent += s.metric("tally_sink_operations_sent_total") - ops0[i];
            perSink.append(String.format(Locale.ROOT, " %s %.0f RU/s;", s.name, ru));
        }
        log.info(String.format(Locale.ROOT, "%s: %.0f RU/s charged for bulk writes over %.1f s (budget %d, %.0f%%);%s 429 share %.1f%% of %.0f operations",
                what, ruPerSecond, seconds, BUDGET, 100 * ruPerSecond / BUDGET, perSink, sent == 0 ? 0 : 100 * throttled / sent, sent));
        return ruPerSecond;
    }
}
