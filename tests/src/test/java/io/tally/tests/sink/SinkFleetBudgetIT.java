package io.tally.tests.sink;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.fasterxml.jackson.databind.JsonNode;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.IngestNode;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.pipeline.ScaleOut;
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
 * One RU budget for the fleet: three sink processes share {@code sink.ru-budget} ({@code
 * sink.ru-budget.fleet-control-container}). Each sink's pacer admits at most the budget's share of the partitions it
 * owns, under the SDK's global throughput control. With a backlog far above the budget the request units the endpoint
 * charges for their bulk writes stay within 10% of it; after one sink is killed (SIGKILL, so it never says goodbye), the
 * other two take over its partitions and its share.
 *
 * <p>Twice: with updates as the test pipeline makes them (a commit every 200 ms), and in bursts (a commit every 4 s, as
 * a slow aggregation or a catch-up makes them). In bursts, before the pacer took its share of the partitions, the SDK
 * alone let three sinks spend 1.5-3.5x the budget over 20 s (it admits every request while the second's allocation is
 * not spent, and books charges as answers come). A burst-fed sink holds what is behind (sink.backlog.max-window.ms), so
 * it may spend less than its share: there only the ceiling is asserted.
 *
 * <p>A private endpoint without a throughput limit of its own: what the sinks spend is what they chose to spend, and no
 * other test's traffic is counted.
 */
class SinkFleetBudgetIT {
    private static final Logger log = LoggerFactory.getLogger(SinkFleetBudgetIT.class);
    static final int BUDGET = 600;
    static final Duration WARM_UP = Duration.ofSeconds(25);
    static final Duration WINDOW = Duration.ofSeconds(20);
    /** The group's session timeout (10 s) and a rebalance, plus slack. */
    static final Duration TAKE_OVER = Duration.ofSeconds(20);

    @Test
    void threeSinksShareOneBudgetAndTheSurvivorsTakeOverAKilledOnesShare(@TempDir Path dir) throws Exception {
        double[] ru = run(dir, "fleet");
        assertThat(ru[0]).as("RU/s of three sinks against a fleet budget of %d", BUDGET).isBetween(BUDGET * 0.5, BUDGET * 1.1); // sinks that hold late updates may spend less: 66-101% seen
        assertThat(ru[1]).as("RU/s of the two survivors, %s after the kill", TAKE_OVER).isBetween(BUDGET * 0.9, BUDGET * 1.1);
    }

    @Test
    void updatesThatComeInBurstsStayWithinTheBudget(@TempDir Path dir) throws Exception {
        double[] ru = run(dir, "bursts", "--ingest.commit-interval.ms=4000");
        assertThat(ru[0]).as("RU/s of three sinks fed in bursts, against a fleet budget of %d", BUDGET).isLessThanOrEqualTo(BUDGET * 1.1);
        assertThat(ru[1]).as("RU/s of the two survivors fed in bursts").isLessThanOrEqualTo(BUDGET * 1.1);
    }

    /** RU/s of three sinks, then of two after the third is killed. */
    static double[] run(Path dir, String name, String... aggregation) throws Exception {
        LocalCosmos cosmos = LocalCosmos.startPrivate();
        CosmosControl control = cosmos.control();
        try (Pipeline p = new Pipeline(name, TestKafka.get().bootstrapServers(), LocalSchemaRegistry.get(), cosmos, dir)) {
            p.provisionTopics();
            p.start("agg", "aggregate", aggregation);
            String[] budget = {"--sink.ru-budget=" + BUDGET, "--sink.ru-budget.fleet-control-container=tally-throughput-control",
                    ScaleOut.FAST_FAILOVER[0], ScaleOut.FAST_FAILOVER[1]};
            List<IngestNode> sinks = List.of(p.start("sink-1", "sink", budget), p.start("sink-2", "sink", budget),
                    p.start("sink-3", "sink", budget));
            p.awaitReady(Pipeline.START_TIMEOUT);
            p.produceInBackground(p.loadgen(60_000, 500, 91));

            Thread.sleep(WARM_UP.toMillis());
            double three = measure(control, sinks, "three sinks", cosmos, p.database);

            sinks.get(2).kill();
            Thread.sleep(TAKE_OVER.toMillis());
            double two = measure(control, sinks.subList(0, 2), "two sinks after one was killed", cosmos, p.database);
            return new double[] {three, two};
        }
    }

    /** What the SDK's global throughput control allocated each live client, RU/s (its lease items). */
    static List<Long> allocations(LocalCosmos cosmos, String database) {
        return cosmos.asyncClient().getDatabase(database).getContainer("tally-throughput-control")
                .queryItems("SELECT VALUE c.allocatedThroughput FROM c WHERE IS_DEFINED(c.allocatedThroughput)",
                        new CosmosQueryRequestOptions(), Double.class)
                .map(Math::round).collectList().block();
    }

    /** RU/s the endpoint charged for bulk writes over {@link #WINDOW}, with the sinks' own figures logged beside it. */
    static double measure(CosmosControl control, List<IngestNode> sinks, String what, LocalCosmos cosmos, String database)
            throws InterruptedException {
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
            perSink.append(String.format(Locale.ROOT, " %s %.0f RU/s (paced at %.0f, %.0f calls in flight at most, %.0f waiting);", s.name, ru,
                    s.metric("tally_sink_pacing_rate"), s.metric("tally_sink_concurrency_limit"), s.metric("tally_sink_waiting_documents")));
        }
        log.info(String.format(Locale.ROOT, "%s: %.0f RU/s charged for bulk writes over %.1f s (budget %d, %.0f%%);%s 429 share %.1f%% of %.0f operations; "
                        + "the SDK's allocations %s RU/s", what, ruPerSecond, seconds, BUDGET, 100 * ruPerSecond / BUDGET, perSink,
                sent == 0 ? 0 : 100 * throttled / sent, sent, allocations(cosmos, database)));
        return ruPerSecond;
    }
}
