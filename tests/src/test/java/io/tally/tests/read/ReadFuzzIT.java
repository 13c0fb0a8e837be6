package io.tally.tests.read;

import static io.tally.tests.read.ReadServiceFixture.bucket;
import static io.tally.tests.read.ReadServiceFixture.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * read-service against generated requests ({@link RequestFuzzer}) on the local Cosmos endpoint: every answer
 * is a 4xx problem document, or a 2xx for a request that is valid; never a 5xx, never a connection left
 * hanging. A wrong method on a known path is 405 with {@code Allow}. The seed is logged; rerun one with
 * {@code -Dtally.fuzz.seed=N}, and change the count with {@code -Dtally.fuzz.requests=N}.
 */
@ExtendWith(LocalStackExtension.class)
class ReadFuzzIT {
    private static final Logger log = LoggerFactory.getLogger(ReadFuzzIT.class);
    static final String PK = "fz|cust-1";
    static final int REQUESTS = Integer.getInteger("tally.fuzz.requests", 3000);

    static ReadServiceFixture f;
    static RawHttp http;
    static List<String> valid;

    @BeforeAll
    static void start(LocalCosmos cosmos) {
        // Generous timeouts: a slow shared machine must not turn into 504s, which are not what this test is about.
        f = new ReadServiceFixture(cosmos, Map.of(), "--read.request-timeout.ms=10000", "--read.cosmos.end-to-end-timeout.ms=8000",
                "--read.ready.timeout.ms=10000");
        long hour = TimeUnit.HOUR.bucketIndex(Instant.now());
        List<BucketDocument> docs = new ArrayList<>();
        for (long h = hour - 30; h <= hour; h++) docs.add(bucket("fz", "cust-1", "spend-per-customer", TimeUnit.HOUR, h, "3.50", 2, "1.00", "2.50"));
        f.write(docs);
        http = new RawHttp(f.read.port(), Duration.ofSeconds(20));
        valid = List.of(
                "/v1/buckets/" + enc(PK) + "/" + enc(docs.get(5).id()),
                "/v1/buckets/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(hour - 24)
                        + "&to=" + TimeUnit.HOUR.bucketStart(hour),
                "/v1/rollups/" + enc(PK) + "?grade=spend-per-customer&unit=hour&last=24",
                "/v1/rollups/" + enc(PK) + "?grade=spend-per-customer-sku&qualifier=sku-1&unit=day&last=7",
                "/v1/features/" + enc(PK),
                "/health/live", "/metrics", "/openapi.json", "/v1/rules");
    }

    @AfterAll
    static void stop() {
        if (f != null) f.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "get"})
    void aMethodOtherThanGetOnAKnownPathIs405WithAllow(String method) throws Exception {
        for (String target : List.of(valid.get(0), valid.get(2), "/health/ready", "/metrics")) {
            RawHttp.Response r = http.send(new RawHttp.Request(method, target.getBytes(StandardCharsets.US_ASCII), Map.of(), null));
            assertThat(r.status()).as("%s %s", method, target).isEqualTo(405);
            assertThat(r.header("Allow")).isEqualTo("GET");
            assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
            if (!method.equals("HEAD")) assertThat(ReadServiceFixture.JSON.readTree(r.body()).get("status").asInt()).isEqualTo(405);
        }
        RawHttp.Response unknown = http.send(new RawHttp.Request(method, "/v2/nothing".getBytes(StandardCharsets.US_ASCII), Map.of(), null));
        assertThat(unknown.status()).as("an unknown path stays 404 whatever the method").isEqualTo(404);
    }

    @Test
    void generatedRequestsAreAnsweredWith2xxOr4xxProblemsNever5xxOrAHang() throws Exception {
        long seed = Long.getLong("tally.fuzz.seed", System.nanoTime());
        log.info("read-service fuzz: {} requests, seed {} (rerun with -Dtally.fuzz.seed={})", REQUESTS, seed, seed);
        RequestFuzzer fuzzer = new RequestFuzzer(seed, valid);
        List<RequestFuzzer.Case> cases = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) cases.add(fuzzer.next());

        Map<Integer, AtomicLong> byStatus = new ConcurrentHashMap<>();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (RequestFuzzer.Case c : cases) {
                pool.submit(() -> {
                    try {
                        RawHttp.Response r = http.send(c.request());
                        byStatus.computeIfAbsent(r.status(), s -> new AtomicLong()).incrementAndGet();
                        String wrong = judge(c, r);
                        if (wrong != null) failures.add(wrong + ": " + c.request().describe() + " -> " + r.status() + " " + shorten(r.text()));
                    } catch (Exception e) {
                        failures.add("no answer (" + e + "): " + c.request().describe());
                    }
                });
            }
        } finally {
            pool.shutdown();
        }
        assertThat(pool.awaitTermination(10, java.util.concurrent.TimeUnit.MINUTES)).as("every request answered").isTrue();
        Map<Integer, Long> counts = new TreeMap<>();
        byStatus.forEach((k, v) -> counts.put(k, v.get()));
        log.info("read-service fuzz: answers by status {}; {} failures", counts, failures.size());
        assertThat(failures).as("seed %d, answers by status %s", seed, counts).isEmpty();
        assertThat(counts.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(REQUESTS);
        assertThat(counts).as("the valid share was served").containsKey(200);

        // The service's own count agrees: no 5xx was recorded, and it still serves.
        String metrics = f.get("/metrics").body();
        assertThat(metrics.lines().filter(l -> l.startsWith("tally_read_requests_seconds_count") && l.matches(".*status=\"5\\d\\d\".*")))
                .as("5xx answers recorded by read-service").isEmpty();
        assertThat(f.get("/health/ready").status()).isEqualTo(200);
    }

    /** What is wrong with the answer, or null. */
    private static String judge(RequestFuzzer.Case c, RawHttp.Response r) {
        String method = c.request().method();
        if (c.valid()) {
            if (r.status() != 200) return "a valid request was not 200";
            return r.header("Content-Type") != null && r.header("Content-Type").startsWith("application/json") && json(r) == null
                    ? "a 200 that is not JSON" : null;
        }
        if (r.status() >= 500) return "5xx";
        if (r.status() < 200 || (r.status() >= 300 && r.status() < 400)) return "neither 2xx nor 4xx";
        if (!method.equals("GET") && r.status() != 404 && r.status() != 405) return "a " + method + " was not 404 or 405";
        if (r.status() >= 400) {
            if (!"application/problem+json".equals(r.header("Content-Type"))) return "a 4xx without problem JSON";
            if (method.equals("HEAD")) return null; // no body by definition
            JsonNode p = json(r);
            if (p == null || p.path("status").asInt() != r.status() || !p.path("title").isTextual() || !p.path("type").isTextual()) {
                return "a problem document without type, title and the status";
            }
            if (r.status() == 405 && !"GET".equals(r.header("Allow"))) return "405 without Allow: GET";
        }
        return null;
    }

    private static JsonNode json(RawHttp.Response r) {
        try {
            return ReadServiceFixture.JSON.readTree(r.body());
        } catch (Exception e) {
            return null;
        }
    }

    private static String shorten(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
