package io.tally.loadgen.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's queries against a stand-in read-service that answers from canned JSON: the curl commands
 * printed, the answers pretty-printed, and each verdict against a ground-truth file. Hours: the run
 * starts 2026-03-01T10:00Z (hour 492322), the clock reads 11:30 (hour 492323), so the roll-up asks
 * for the last 2 hours.
 */
class DemoQueriesTest {
    static final String TRUTH = """
            {"run": {"domain": "demo-x", "start": "2026-03-01T10:00:00Z"},
             "expected": {"accepted": 3},
             "buckets": {"demo-x|c-0": {
               "spend-per-customer|day|20513": {"sum": 13.0000, "count": 3, "min": 1.0000, "max": 9.0000},
               "spend-per-customer|hour|492322": {"sum": 4.0000, "count": 2, "min": 1.0000, "max": 3.0000},
               "spend-per-customer|hour|492323": {"sum": 9.0000, "count": 1, "min": 9.0000, "max": 9.0000}}}}
            """;
    static final String LATEST = """
            {"pk": "demo-x|c-0", "id": "spend-per-customer|hour|492323", "bucket": "2026-03-01T11:00:00Z",
             "sum": 9.0000, "count": 1, "min": 9.0000, "max": 9.0000, "tags": [], "ver": 1}""";
    static final String RANGE = """
            {"pk": "demo-x|c-0", "buckets": [
              {"id": "spend-per-customer|hour|492322", "bucket": "2026-03-01T10:00:00Z", "sum": 4.0000, "count": 2},
              {"id": "spend-per-customer|hour|492323", "bucket": "2026-03-01T11:00:00Z", "sum": 9.0000, "count": 1}]}""";
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-03-01T11:30:00Z"), ZoneOffset.UTC);

    HttpServer server;
    String url;
    Path truth;
    final AtomicReference<String> rollup = new AtomicReference<>("{\"sum\": 13.0000, \"count\": 3}");
    final List<String> asked = new ArrayList<>();

    @BeforeEach
    void start(@TempDir Path dir) throws IOException {
        truth = Files.writeString(dir.resolve("truth.json"), TRUTH);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            String uri = exchange.getRequestURI().getRawPath() + "?" + exchange.getRequestURI().getRawQuery();
            synchronized (asked) {
                asked.add(uri);
            }
            String body = uri.startsWith("/v1/rollups/") ? rollup.get()
                    : uri.startsWith("/v1/buckets/demo-x%7Cc-0/") ? LATEST : RANGE;
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        url = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void printsTheThreeQueriesWithTheirAnswersAndAgrees() throws Exception {
        Result r = run("--truth=" + truth, "--read-url=" + url, "--show-read-url=http://host:8080");

        assertThat(r.code).isEqualTo(DemoQueries.AGREES);
        assertThat(r.out).contains("""
                1. point read: c-0's spend in hour bucket 492323 (2026-03-01T11:00Z),
                   compared with loadgen's ground truth

                  $ curl -s 'http://host:8080/v1/buckets/demo-x%7Cc-0/spend-per-customer%7Chour%7C492323'
                  {
                    "pk": "demo-x|c-0",
                    "id": "spend-per-customer|hour|492323",
                    "bucket": "2026-03-01T11:00:00Z",
                    "sum": 9.0000,
                    "count": 1,
                    "min": 9.0000,
                    "max": 9.0000,
                    "tags": [],
                    "ver": 1
                  }
                  ground truth: sum 9.0000, count 1, min 9.0000, max 9.0000: read-service agrees
                """);
        assertThat(r.out).contains("2. range query inside c-0's partition: its hour buckets since 2026-03-01T10:00:00Z")
                .contains("$ curl -s 'http://host:8080/v1/buckets/demo-x%7Cc-0?grade=spend-per-customer&unit=hour&from=2026-03-01T10:00:00Z'")
                .contains("    2026-03-01T10:00:00Z  sum 4.0000  count 2  agrees\n")
                .contains("    2026-03-01T11:00:00Z  sum 9.0000  count 1  agrees\n")
                .contains("3. roll-up: c-0's spend over the last 2 hours (the current one included), summed by read-service")
                .contains("$ curl -s 'http://host:8080/v1/rollups/demo-x%7Cc-0?grade=spend-per-customer&unit=hour&last=2'")
                .contains("  ground truth: 13.0000 over 2 hour buckets: read-service agrees")
                .contains("more: curl -s 'http://host:8080/v1/features/demo-x%7Cc-0'")
                .doesNotContain("DIFFERS");
        assertThat(asked).contains("/v1/rollups/demo-x%7Cc-0?grade=spend-per-customer&unit=hour&last=2");
    }

    @Test
    void aRollUpThatDiffersFromTheGroundTruthFails() throws Exception {
        rollup.set("{\"sum\": 12.99, \"count\": 3}");
        Result r = run("--truth=" + truth, "--read-url=" + url);

        assertThat(r.code).isEqualTo(DemoQueries.DIFFERS);
        assertThat(r.out).contains("  ground truth: 13.0000 over 2 hour buckets: read-service DIFFERS (12.99)")
                .contains("$ curl -s '" + url + "/v1/rollups/");
    }

    @Test
    void noReadServiceIsADifferenceThatSaysWhy() throws Exception {
        server.stop(0);
        Result r = run("--truth=" + truth, "--read-url=" + url);

        assertThat(r.code).isEqualTo(DemoQueries.DIFFERS);
        assertThat(r.out).contains("  no answer from " + url).contains("read-service DIFFERS (sum ?, count ?)");
    }

    @Test
    void longAnswersAreCutAndSaySo() throws Exception {
        StringBuilder many = new StringBuilder("{\"sum\": 13.0000, \"count\": 3, \"list\": [");
        for (int i = 0; i < 30; i++) many.append(i == 0 ? "" : ",").append(i);
        rollup.set(many.append("]}").toString());
        Result r = run("--truth=" + truth, "--read-url=" + url);

        assertThat(r.code).isEqualTo(DemoQueries.AGREES);
        // 36 lines: two braces, sum, count, "list": [, 30 elements, ]; 20 shown.
        assertThat(r.out).contains("\n    ... (16 more lines)\n");
    }

    @Test
    void argumentsAndTruthProblemsCannotBeChecked(@TempDir Path dir) throws Exception {
        assertThat(run("--read-url=" + url).code).isEqualTo(DemoQueries.CANNOT_CHECK);
        assertThat(run("--truth=" + truth, "--read-url=" + url, "--verbose").err).contains("unknown argument '--verbose'").contains("usage:");
        Result other = run("--truth=" + truth, "--read-url=" + url, "--customer=c-9");
        assertThat(other.code).isEqualTo(DemoQueries.CANNOT_CHECK);
        assertThat(other.err).contains("the ground truth has no spend-per-customer hour bucket of c-9");
        assertThat(run("--truth=" + dir.resolve("missing.json"), "--read-url=" + url).code).isEqualTo(DemoQueries.CANNOT_CHECK);
    }

    record Result(int code, String out, String err) {}

    static Result run(String... args) throws InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int code = DemoQueries.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), CLOCK, Duration.ZERO);
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
