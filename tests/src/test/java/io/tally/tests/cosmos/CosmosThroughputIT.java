package io.tally.tests.cosmos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.ThrottlingRetryOptions;
import com.azure.cosmos.models.CosmosBulkOperationResponse;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import io.tally.testsupport.cosmos.CosmosControl;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** Provisioned throughput: a per-container RU/s budget answered with 429 / 3200 + x-ms-retry-after-ms. */
class CosmosThroughputIT extends LocalCosmosTestBase {

    @Test
    void aSpentBudgetAnswers429WithSubStatus3200AndRetryAfter() {
        CosmosAsyncContainer c = container("tight", null);
        control.setThroughput(databaseId, "tight", 30.0); // about five small creates per second
        CosmosAsyncClient noRetries = cosmos.clientBuilder()
                .throttlingRetryOptions(new ThrottlingRetryOptions().setMaxRetryAttemptsOnThrottledRequests(0))
                .buildAsyncClient();
        try {
            CosmosAsyncContainer direct = noRetries.getDatabase(databaseId).getContainer("tight");
            int accepted = 0;
            CosmosException throttled = null;
            for (int i = 0; i < 50 && throttled == null; i++) {
                try {
                    direct.createItem(doc("p", "i" + i)).block();
                    accepted++;
                } catch (CosmosException e) {
                    throttled = e;
                }
            }
            assertThat(throttled).as("a 429 within 50 writes of ~4 RU at 30 RU/s").isNotNull();
            assertThat(throttled.getStatusCode()).isEqualTo(429);
            assertThat(throttled.getSubStatusCode()).isEqualTo(3200);
            assertThat(throttled.getRetryAfterDuration()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(1));
            // Budget of this second plus at most the next one, ~4 RU per write (3.95: a small document, no indexed property).
            assertThat(accepted).isBetween(5, 16);
        } finally {
            noRetries.close();
        }
        // The other containers are not limited.
        CosmosAsyncContainer free = container("free", null);
        assertThat(Flux.range(0, 30).concatMap(i -> free.createItem(doc("p", "f" + i))).count().block()).isEqualTo(30);
        assertThat(c).isNotNull();
    }

    @Test
    void theSdkWaitsOutThrottlingWithItsDefaultRetries() {
        CosmosAsyncContainer c = container("patient", null);
        control.setThroughput(databaseId, "patient", 100.0);
        long throttledBefore = control.stats().throttled();
        long t0 = System.nanoTime();
        Flux.range(0, 80).concatMap(i -> c.createItem(doc("p", "w" + i))).blockLast();
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        // 80 x 3.95 RU (a small document, no indexed property) = 316 RU at 100 RU/s: at least two full seconds of waiting.
        assertThat(took).isGreaterThan(Duration.ofMillis(1500));
        assertThat(control.stats().throttled()).isGreaterThan(throttledBefore);
        control.setThroughput(databaseId, "patient", null);
        assertThat(c.queryItems("SELECT VALUE COUNT(1) FROM c", new CosmosQueryRequestOptions(), Long.class).blockFirst())
                .isEqualTo(80L);
    }

    @Test
    void aBulkLoadUnderABudgetCompletesWithEveryItem() {
        CosmosAsyncContainer c = container("bulk", null);
        control.setThroughput(databaseId, "bulk", 1000.0);
        CosmosControl.Stats before = control.stats();
        int n = 500; // ~2,000 RU (~4 each): two to three one-second windows of budget
        List<CosmosItemOperation> ops = IntStream.range(0, n)
                .mapToObj(i -> CosmosBulkOperations.getUpsertItemOperation(doc("e" + (i % 50), "b" + i).put("v", i), new PartitionKey("e" + (i % 50))))
                .toList();
        long t0 = System.nanoTime();
        List<CosmosBulkOperationResponse<Object>> results = c.executeBulkOperations(Flux.fromIterable(ops)).collectList().block();
        double seconds = (System.nanoTime() - t0) / 1e9;

        assertThat(results).hasSize(n).allSatisfy(r -> assertThat(r.getResponse().getStatusCode()).isEqualTo(201));
        control.setThroughput(databaseId, "bulk", null);
        assertThat(c.queryItems("SELECT VALUE COUNT(1) FROM c", new CosmosQueryRequestOptions(), Long.class).blockFirst())
                .isEqualTo((long) n);
        CosmosControl.Stats after = control.stats();
        assertThat(after.batchOperationsThrottled() + after.throttled())
                .as("the budget pushed back").isGreaterThan(before.batchOperationsThrottled() + before.throttled());
        double charged = results.stream().mapToDouble(r -> r.getResponse().getRequestCharge()).sum();
        // The budget is per wall-clock second: a load spanning k second boundaries can use at most
        // k + 1 seconds' worth (plus the overdraft of the last admitted operation).
        assertThat(seconds).as("~2,000 RU need at least two one-second windows").isGreaterThan(1.0);
        assertThat(charged).isLessThanOrEqualTo(1000 * (Math.ceil(seconds) + 1) + 20);
    }

    @Test
    void everyResponseCarriesARequestCharge() {
        CosmosAsyncContainer c = container("charged", null);
        assertThat(c.createItem(doc("p", "a")).block().getRequestCharge()).isPositive();
        assertThat(c.read().block().getRequestCharge()).isPositive();
        assertThatThrownBy(() -> c.readItem("missing", new PartitionKey("p"), Object.class).block())
                .isInstanceOfSatisfying(CosmosException.class, e -> assertThat(e.getRequestCharge()).isPositive());
        assertThat(control.stats().requestCharge()).isPositive();
        assertThat(control.throughput().path("containers").has(databaseId + "/charged")).isFalse();
    }
}
