package io.tally.tests.read;

import static io.tally.tests.read.ReadApiIT.assertProblem;
import static io.tally.tests.read.ReadServiceFixture.bucket;
import static io.tally.tests.read.ReadServiceFixture.enc;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.CosmosControl.Fault;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Cosmos failures injected at the local endpoint (only for this fixture's container, so nothing else
 * sharing the endpoint is hit) and what the API answers: 429 -> 503 with Retry-After, 503 -> 503,
 * a slow store -> 504, an unreachable store -> readiness 503. No body carries Cosmos internals.
 */
@ExtendWith(LocalStackExtension.class)
class ReadFaultsIT {
    static final String PK = "it|cust-1";
    static ReadServiceFixture f;
    static CosmosControl control;
    static BucketDocument doc;
    static String rangeQuery;
    final List<String> rules = new ArrayList<>();

    @BeforeAll
    static void start(LocalCosmos cosmos) {
        // Short timeouts keep the timeout tests fast; the SDK gives up (end-to-end policy) before the HTTP layer.
        f = new ReadServiceFixture(cosmos, Map.of(), "--read.request-timeout.ms=600", "--read.cosmos.end-to-end-timeout.ms=400",
                "--read.ready.timeout.ms=400");
        control = cosmos.control();
        long h = TimeUnit.HOUR.bucketIndex(Instant.now());
        doc = bucket("it", "cust-1", "spend-per-customer", TimeUnit.HOUR, h, "5.00", 1, "5.00", "5.00");
        f.write(List.of(doc));
        rangeQuery = "/v1/buckets/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(h - 71)
                + "&to=" + TimeUnit.HOUR.bucketStart(h + 1);
    }

    @AfterEach
    void clearFaults() {
        rules.forEach(control::removeFault);
        rules.clear();
    }

    @AfterAll
    static void stop() {
        if (f != null) f.close();
    }

    private void inject(Fault fault) {
        rules.add(control.injectFault(fault.pathPrefix(f.pathPrefix())));
    }

    private String point() {
        return "/v1/buckets/" + enc(PK) + "/" + enc(doc.id());
    }

    @Test
    void throttledPointReadIs503WithRetryAfter() {
        // retry-after 1.5 s exceeds read.cosmos.throttle-max-wait.ms: the SDK hands the 429 back at once.
        inject(Fault.status(429).retryAfterMs(1500).kind("read").count(20));
        var a = f.get(point());
        assertProblem(a, 503, "throttling");
        assertThat(a.header("Retry-After")).isEqualTo("2");
    }

    @Test
    void throttledQueryIs503WithRetryAfter() {
        inject(Fault.status(429).retryAfterMs(800).kind("query").count(20));
        var a = f.get(rangeQuery);
        assertProblem(a, 503, "throttling");
        assertThat(a.header("Retry-After")).isEqualTo("1");
    }

    @Test
    void aShortThrottleIsRetriedByTheSdkAndServed() {
        inject(Fault.status(429).retryAfterMs(20).kind("read").count(1));
        assertThat(f.get(point()).status()).isEqualTo(200);
    }

    @Test
    void unavailableStoreIs503() {
        inject(Fault.status(503).kind("read").count(5));
        var a = f.get(point());
        assertProblem(a, 503, "unavailable");
        assertThat(a.header("Retry-After")).isEqualTo("1");
    }

    @Test
    void unavailableStoreOnARollupIs503() {
        inject(Fault.status(503).kind("query").count(5));
        assertProblem(f.get("/v1/rollups/" + enc(PK) + "?grade=spend-per-customer&unit=hour&last=72"), 503, "unavailable");
    }

    @Test
    void slowPointReadIs504() {
        inject(Fault.delay(1500).kind("read").count(1));
        assertProblem(f.get(point()), 504, "did not answer in time");
    }

    @Test
    void slowQueryIs504() {
        inject(Fault.delay(1500).kind("query").count(1));
        assertProblem(f.get(rangeQuery), 504, "did not answer in time");
    }

    @Test
    void slowFeatureVectorIs504() {
        // The feature vector is point reads of the entity's documents (one per unit), no longer a query.
        inject(Fault.delay(1500).kind("read").count(1));
        assertProblem(f.get("/v1/features/" + enc(PK)), 504, "did not answer in time");
    }

    @Test
    void internalCosmosErrorsAre500WithoutDetails() {
        inject(Fault.status(400).kind("read").count(1));
        var a = f.get(point());
        assertProblem(a, 500, "could not be served");
    }

    @Test
    void readinessFollowsCosmos() {
        assertThat(f.get("/health/ready").status()).isEqualTo(200);
        inject(Fault.status(503).kind("read").count(1000));
        var down = f.get("/health/ready");
        assertThat(down.status()).isEqualTo(503);
        assertThat(down.json().get("checks").get("cosmos").asText()).isEqualTo("DOWN");
        assertThat(f.get("/health/live").status()).as("liveness does not depend on Cosmos").isEqualTo(200);
        clearFaults();
        assertThat(f.get("/health/ready").status()).isEqualTo(200);
    }

    @Test
    void requestsBeyondTheInFlightBoundAre503(LocalCosmos cosmos) throws Exception {
        try (var small = new ReadServiceFixture(cosmos, Map.of(), "--read.max-in-flight-requests=1")) {
            small.write(List.of(doc));
            String id = control.injectFault(Fault.delay(700).kind("read").count(1).pathPrefix(small.pathPrefix()));
            try {
                var slow = java.util.concurrent.CompletableFuture.supplyAsync(() -> small.get(point()));
                // The slow read holds the only slot; wait until the endpoint has it, then ask again.
                long deadline = System.nanoTime() + 5_000_000_000L;
                while (control.faults().stream().noneMatch(r -> r.path("id").asText().equals(id) && r.path("hits").asInt() > 0)
                        && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                var shed = small.get(point());
                assertProblem(shed, 503, "Too many requests in flight");
                assertThat(shed.header("Retry-After")).isEqualTo("1");
                assertThat(slow.get().status()).isEqualTo(200);
                assertThat(small.get(point()).status()).as("the slot is free again").isEqualTo(200);
            } finally {
                control.removeFault(id);
            }
        }
    }

    @Test
    void failuresAreCountedInTheMetricsByStatus() {
        inject(Fault.status(503).kind("read").count(1));
        f.get(point());
        assertThat(f.get("/metrics").body()).contains("endpoint=\"point-read\"").contains("status=\"503\"");
    }
}
