package io.tally.tests.cosmos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosEndToEndOperationLatencyPolicyConfigBuilder;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.ThrottlingRetryOptions;
import com.azure.cosmos.models.CosmosBulkOperationResponse;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.testsupport.cosmos.CosmosControl.Fault;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.publisher.Flux;

/**
 * What the Java SDK 4.81.0 (Gateway mode, one region) does with each fault the endpoint injects. The
 * tables pin the observed behaviour: which statuses it retries by itself (then the caller sees
 * success, and the endpoint counted more than one attempt) and which it hands to the caller at once.
 * The sink's retry classifier has to cover exactly the second group.
 */
class CosmosFaultInjectionIT extends LocalCosmosTestBase {
    private CosmosAsyncContainer items;
    private String scope;

    @BeforeAll
    void createContainer() {
        items = container("faults", null);
        scope = "/dbs/" + databaseId + "/colls/faults";
        items.createItem(doc("p", "x").put("v", 1)).block();
    }

    private String injectHere(Fault fault) {
        return inject(fault.pathPrefix(scope));
    }

    /** kind, status, subStatus, count; outcome: "ok" or the status/sub-status the caller gets; attempts the endpoint saw. */
    @ParameterizedTest(name = "{0} answered {1}/{2} x{3} -> {4} after {5} attempt(s)")
    @CsvSource({
            "read,  429, 3200, 2, ok,       2",
            "read,  449,    0, 1, ok,       1",
            "read,  408,    0, 1, 408/0,    1",
            "read,  410, 1002, 1, 410/1002, 1",
            "read,  410, 1000, 1, ok,       1",
            "read,  410,    0, 1, 410/0,    1",
            "read,  500,    0, 1, 500/0,    1",
            "read,  503,    0, 1, 503/0,    1",
            "write, 429, 3200, 2, ok,       2",
            "write, 449,    0, 1, ok,       1",
            "write, 408,    0, 1, 408/0,    1",
            "write, 410, 1002, 1, 410/1002, 1",
            "write, 410, 1000, 1, ok,       1",
            "write, 500,    0, 1, 500/0,    1",
            "write, 503,    0, 1, 503/0,    1",
            "query, 410, 1002, 1, ok,       1",
            "query, 503,    0, 1, 503/0,    1",
    })
    void sdkReactionToAnInjectedStatus(String kind, int status, int subStatus, int count, String outcome, int attempts) {
        String rule = injectHere(Fault.status(status).subStatus(subStatus).retryAfterMs(10).kind(kind).count(count));
        String actual = attempt(kind);
        assertThat(actual).isEqualTo(outcome);
        assertThat(control.faultHits(rule)).as("requests the endpoint failed").isEqualTo(attempts);
    }

    @Test
    void throttlingBeyondTheRetryBudgetSurfacesAs429WithRetryAfter() {
        CosmosAsyncClient impatient = cosmos.clientBuilder()
                .throttlingRetryOptions(new ThrottlingRetryOptions().setMaxRetryAttemptsOnThrottledRequests(1))
                .buildAsyncClient();
        try {
            CosmosAsyncContainer c = impatient.getDatabase(databaseId).getContainer("faults");
            String rule = injectHere(Fault.status(429).retryAfterMs(40).kind("read"));
            assertThatThrownBy(() -> c.readItem("x", new PartitionKey("p"), ObjectNode.class).block())
                    .isInstanceOfSatisfying(CosmosException.class, e -> {
                        assertThat(e.getStatusCode()).isEqualTo(429);
                        assertThat(e.getSubStatusCode()).isEqualTo(3200);
                        assertThat(e.getRetryAfterDuration()).isEqualTo(Duration.ofMillis(40));
                    });
            assertThat(control.faultHits(rule)).as("first attempt + one retry").isEqualTo(2);
        } finally {
            impatient.close();
        }
    }

    @Test
    void aDroppedConnectionIsRetriedForReadsButNotForWrites() {
        String readDrop = injectHere(Fault.drop().kind("read").count(1));
        assertThat(attempt("read")).isEqualTo("ok");
        assertThat(control.faultHits(readDrop)).isEqualTo(1);

        String writeDrop = injectHere(Fault.drop().kind("write").count(1));
        assertThat(attempt("write")).as("a write may have been applied: the SDK does not repeat it").isEqualTo("503/10001");
        assertThat(control.faultHits(writeDrop)).isEqualTo(1);

        String readsDown = injectHere(Fault.drop().kind("read").count(10));
        assertThat(attempt("read")).isEqualTo("503/10001");
        assertThat(control.faultHits(readsDown)).as("the SDK gives a read three attempts").isEqualTo(3);
    }

    @Test
    void bulkRetriesThrottledAndGoneBatchesButSurfacesServerErrors() {
        injectHere(Fault.status(429).retryAfterMs(10).kind("batch").count(2));
        assertThat(bulkUpsert("bulk-a")).isEqualTo("201");
        removeInjectedFaultsNow();
        injectHere(Fault.status(410).subStatus(0).kind("batch").count(1));
        assertThat(bulkUpsert("bulk-b")).isEqualTo("201");
        removeInjectedFaultsNow();
        injectHere(Fault.status(503).kind("batch").count(1));
        assertThat(bulkUpsert("bulk-c")).isEqualTo("503/0");
    }

    @Test
    void delayAddsLatencyAndTheEndToEndTimeoutCutsItShort() {
        injectHere(Fault.delay(300).kind("read"));
        long t0 = System.nanoTime();
        assertThat(attempt("read")).isEqualTo("ok");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(300));

        CosmosItemRequestOptions hurried = new CosmosItemRequestOptions().setCosmosEndToEndOperationLatencyPolicyConfig(
                new CosmosEndToEndOperationLatencyPolicyConfigBuilder(Duration.ofMillis(100)).build());
        assertThatThrownBy(() -> items.readItem("x", new PartitionKey("p"), hurried, ObjectNode.class).block())
                .isInstanceOfSatisfying(CosmosException.class, e -> assertThat(e.getStatusCode()).isEqualTo(408));
    }

    @Test
    void theAddedLatencyKnobDelaysEveryRequest() {
        assumeTrue(cosmos.origin().startsWith("started here"), "a global knob: not on a shared endpoint");
        control.setLatency(150);
        try {
            long t0 = System.nanoTime();
            items.readItem("x", new PartitionKey("p"), ObjectNode.class).block();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
        } finally {
            control.setLatency(0);
        }
        long t0 = System.nanoTime();
        items.readItem("x", new PartitionKey("p"), ObjectNode.class).block();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(150));
    }

    @Test
    void rulesMatchOnlyTheirScopeAndHeader() {
        CosmosAsyncContainer other = container("unaffected", null);
        other.createItem(doc("p", "x")).block();
        injectHere(Fault.status(503).kind("read"));
        assertThat(attempt("read")).isEqualTo("503/0");
        assertThat(other.readItem("x", new PartitionKey("p"), ObjectNode.class).block().getStatusCode()).isEqualTo(200);
        removeInjectedFaultsNow();

        // Header matcher: only requests for partition "p" fail.
        injectHere(Fault.status(500).header("x-ms-documentdb-partitionkey", "\\[\"p\"\\]"));
        items.createItem(doc("q", "y")).block();
        assertThat(items.readItem("y", new PartitionKey("q"), ObjectNode.class).block().getStatusCode()).isEqualTo(200);
        assertThat(attempt("read")).isEqualTo("500/0");
    }

    @Test
    void theControlApiIsNotReachableThroughTheCosmosPort() throws Exception {
        injectHere(Fault.status(503).kind("read").count(1));
        HttpClient https = HttpClient.newBuilder().sslContext(cosmos.sslContext()).build();
        HttpResponse<String> r = https.send(HttpRequest.newBuilder(URI.create(cosmos.endpoint() + "/faults")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isIn(400, 404);
        assertThat(r.body()).doesNotContain("\"rules\"");
        assertThat(r.headers().firstValue("x-ms-request-charge")).isPresent();
    }

    /** Runs one operation of the kind; "ok" or "status/subStatus" of the CosmosException. */
    private String attempt(String kind) {
        try {
            switch (kind) {
                case "read" -> items.readItem("x", new PartitionKey("p"), ObjectNode.class).block();
                case "write" -> items.upsertItem(doc("p", "x").put("v", 2)).block();
                case "query" -> items.queryItems("SELECT * FROM c", new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey("p")),
                        ObjectNode.class).collectList().block();
                default -> throw new IllegalArgumentException(kind);
            }
            return "ok";
        } catch (CosmosException e) {
            return e.getStatusCode() + "/" + e.getSubStatusCode();
        }
    }

    private String bulkUpsert(String id) {
        List<CosmosBulkOperationResponse<Object>> out = items.executeBulkOperations(Flux.just(
                CosmosBulkOperations.getUpsertItemOperation(doc("p", id), new PartitionKey("p")))).collectList().block();
        CosmosBulkOperationResponse<Object> r = out.get(0);
        if (r.getResponse() != null) return String.valueOf(r.getResponse().getStatusCode());
        CosmosException e = (CosmosException) r.getException();
        return e.getStatusCode() + "/" + e.getSubStatusCode();
    }
}
