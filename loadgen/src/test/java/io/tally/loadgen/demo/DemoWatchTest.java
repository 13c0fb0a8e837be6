package io.tally.loadgen.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watch against a stand-in metrics endpoint whose figures say the pipeline has read and written
 * everything, with short-lived processes in loadgen's and the apps' place: the live lines, the drain,
 * the summary, and the two ways the watch gives up.
 */
class DemoWatchTest {
    static final String DRAINED = """
            kafka_consumer_fetch_manager_records_consumed_total{topic="transactions",} 1250.0
            kafka_consumer_fetch_manager_records_lag{partition="0",topic="transactions",} 0.0
            kafka_producer_topic_record_send_total{topic="bucket-updates",} 900.0
            kafka_producer_topic_record_send_total{topic="transactions.dlq",} 40.0
            tally_sink_updates_consumed_total 900.0
            tally_sink_documents_written_total{outcome="written",} 700.0
            tally_sink_request_units_total 7000.0
            tally_sink_throttled_total 3.0
            tally_sink_in_flight_documents 0.0
            """;
    /**
     * The two-schema demo drained: 1,250 events read in all, 600 of them from {@code transactions} and 650 from
     * {@code orders}; the sink's lag on {@code bucket-updates} is its own column, not the aggregation's.
     */
    static final String DRAINED_TWO_TOPICS = DRAINED.replace("""
            kafka_consumer_fetch_manager_records_consumed_total{topic="transactions",} 1250.0
            """, """
            kafka_consumer_fetch_manager_records_consumed_total{topic="transactions",} 600.0
            kafka_consumer_fetch_manager_records_consumed_total{topic="orders",} 650.0
            kafka_consumer_fetch_manager_records_consumed_total{topic="bucket-updates",} 900.0
            kafka_consumer_fetch_manager_records_lag{partition="0",topic="orders",} 0.0
            kafka_consumer_fetch_manager_records_lag{partition="0",topic="bucket-updates",} 1.0
            """);
    /** The baseline: 250 events of an earlier run. */
    static final String EARLIER = """
            kafka_consumer_fetch_manager_records_consumed_total{topic="transactions",} 250.0
            tally_sink_documents_written_total{outcome="written",} 100.0
            """;
    static final String TRUTH = """
            {"run": {"complete": true, "acknowledged": 1000, "acknowledgedByKind": {"VALID": 960, "MALFORMED": 40}},
             "expected": {"accepted": 960, "duplicates": 0, "documents": 600, "dlqTotal": 40,
                          "dlq": {"DECODE_FAILED": 40, "INVALID": 0, "LATE": 0, "FUTURE": 0}},
             "buckets": {}}
            """;

    volatile String served = DRAINED;
    HttpServer server;
    Path dir;
    Path truth;
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void start(@TempDir Path dir) throws IOException {
        this.dir = dir;
        truth = dir.resolve("loadgen/truth.json");
        Files.createDirectories(truth.getParent());
        Files.writeString(dir.resolve("baseline.txt"), EARLIER);
        Files.writeString(dir.resolve("loadgen.log"), "12:00:01 INFO ProgressReporter - sent 600  acked 580/1,000 (58%)  580 rec/s\n");
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/metrics", exchange -> {
            byte[] bytes = served.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void printsALineASecondUntilThePipelineHasDrainedThenTheSummary() throws Exception {
        Files.writeString(truth, TRUTH);
        Process loadgen = new ProcessBuilder("sleep", "1").start();

        int code = watch(loadgen.pid(), ProcessHandle.current().pid());

        assertThat(code).isEqualTo(DemoWatch.DONE);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .containsPattern("(?m)^ +\\d+s  produced 1,000/1,000  ingested 1,000  updates 900  docs 600  lag 0\\+0  0 RU/s  429s 3$")
                .doesNotContain("\r");
        assertThat(out.toString(StandardCharsets.UTF_8))
                .containsPattern("elapsed          \\d+ s: loadgen ran \\d+ s, the pipeline drained \\d+ s after it")
                .contains("  produced         1,000 events: VALID 960 MALFORMED 40\n")
                .contains("  DLQ              40 written to transactions.dlq; ground truth 40 (DECODE_FAILED 40, INVALID 0, LATE 0, FUTURE 0)\n")
                .contains("  buckets written  600 document writes for 600 buckets (ground truth); 0 stale, 0 dead-lettered\n")
                .containsPattern("  request units    7,000 RU, peak [\\d,]+ RU/s; 3 operations answered 429 and were retried\n")
                .contains("  ground truth     loadgen/truth.json\n");
    }

    /** Events on two topics: both count as ingested, so the drain is seen at once and the line shows no lag. */
    @Test
    void everySourceTopicCountsTowardsIngestedAndTheDrain() throws Exception {
        assertThat(DRAINED_TWO_TOPICS).as("the scrape of a two-topic run").contains("topic=\"orders\"").doesNotContain("1250");
        served = DRAINED_TWO_TOPICS;
        Files.writeString(truth, TRUTH);
        Process loadgen = new ProcessBuilder("sleep", "1").start();

        int code = watch(loadgen.pid(), ProcessHandle.current().pid(), "--source-topics=transactions,orders");

        assertThat(code).isEqualTo(DemoWatch.DONE);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .containsPattern("(?m)^ +\\d+s  produced 1,000/1,000  ingested 1,000  updates 900  docs 600  lag 0\\+0  0 RU/s  429s 3$")
                .doesNotContain("did not drain");
        assertThat(out.toString(StandardCharsets.UTF_8)).containsPattern("the pipeline drained \\d+ s after it");
    }

    @Test
    void loadgenThatEndsWithoutItsGroundTruthFailed() throws Exception {
        Process loadgen = new ProcessBuilder("true").start();
        loadgen.waitFor();

        assertThat(watch(loadgen.pid(), ProcessHandle.current().pid())).isEqualTo(DemoWatch.LOADGEN_FAILED);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("loadgen ended without a ground truth");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void anAppThatExitsEndsTheWatch() throws Exception {
        Process app = new ProcessBuilder("true").start();
        app.waitFor();

        assertThat(watch(ProcessHandle.current().pid(), app.pid())).isEqualTo(DemoWatch.APP_EXITED);
    }

    @Test
    void readsLoadgensLatestCount() {
        assertThat(DemoWatch.Acked.latest("sent 10  acked 9/1,500 (1%)\nsent 1,210  acked 1,200/1,500 (80%)  900 rec/s  ETA 1s\n"))
                .contains(new DemoWatch.Acked(1200, 1500));
        assertThat(DemoWatch.Acked.latest("starting\n")).isEmpty();
    }

    @Test
    void refusesUnknownAndMissingArguments() {
        assertThatThrownBy(() -> DemoWatch.Options.parse(new String[] {"--metrics-url=http://x"}))
                .hasMessageContaining("--baseline is required");
        assertThatThrownBy(() -> DemoWatch.Options.parse(new String[] {"--colour=yes"})).hasMessageContaining("unknown argument");
    }

    private int watch(long loadgenPid, long appPid, String... more) throws InterruptedException {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(
            "--metrics-url=http://127.0.0.1:" + server.getAddress().getPort() + "/metrics",
            "--baseline=" + dir.resolve("baseline.txt"), "--loadgen-pid=" + loadgenPid,
            "--loadgen-log=" + dir.resolve("loadgen.log"), "--truth=" + truth, "--app-pids=" + appPid,
            "--drain-timeout-s=30", "--root=" + dir));
        args.addAll(java.util.List.of(more));
        DemoWatch.Options options = DemoWatch.Options.parse(args.toArray(String[]::new));
        return new DemoWatch(options, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)).run();
    }
}
