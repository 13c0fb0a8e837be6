package io.tally.read;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.CosmosContainerProactiveInitConfigBuilder;
import com.azure.cosmos.CosmosDiagnosticsThresholds;
import com.azure.cosmos.CosmosEndToEndOperationLatencyPolicyConfigBuilder;
import com.azure.cosmos.GatewayConnectionConfig;
import com.azure.cosmos.ThresholdBasedAvailabilityStrategy;
import com.azure.cosmos.ThrottlingRetryOptions;
import com.azure.cosmos.models.CosmosClientTelemetryConfig;
import com.azure.cosmos.models.CosmosContainerIdentity;
import io.tally.cosmos.CosmosClients;
import io.tally.cosmos.CosmosSettings;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;

/**
 * The Cosmos client as read-service tunes it. On top of the shared settings ({@link CosmosClients}):
 *
 * <ul>
 *   <li>an end-to-end latency policy ({@code read.cosmos.end-to-end-timeout.ms}) so the SDK cancels a read,
 *       retries included, before the HTTP request times out (-> 504);</li>
 *   <li>with more than one preferred region, a threshold-based availability strategy on that policy: a read
 *       unanswered after {@code read.cosmos.availability-threshold.ms} is hedged to the next region;</li>
 *   <li>in Gateway mode a bounded connection pool ({@code read.cosmos.gateway.max-connections});</li>
 *   <li>few, short 429 retries (-> 503 with Retry-After rather than a slow 200);</li>
 *   <li>diagnostics of reads above per-kind latency thresholds logged by {@link SlowCosmosLog};</li>
 *   <li>proactive connection warm-up: the SDK's own in Direct mode (it opens connections to every replica of the
 *       container), and in both modes a burst of concurrent reads before the port opens, which opens the gateway
 *       connection pool and fills the container and partition-key-range caches.</li>
 * </ul>
 */
final class ReadCosmos {
    private static final Logger log = LoggerFactory.getLogger(ReadCosmos.class);

    private ReadCosmos() {}

    static CosmosAsyncClient build(CosmosSettings cosmos, ReadSettings.CosmosReads reads) {
        return CosmosClients.build(cosmos, b -> customize(b, cosmos, reads));
    }

    static CosmosClientBuilder customize(CosmosClientBuilder b, CosmosSettings cosmos, ReadSettings.CosmosReads reads) {
        CosmosEndToEndOperationLatencyPolicyConfigBuilder e2e =
                new CosmosEndToEndOperationLatencyPolicyConfigBuilder(reads.endToEndTimeout()).enable(true);
        if (cosmos.preferredRegions().size() > 1) {
            e2e.availabilityStrategy(new ThresholdBasedAvailabilityStrategy(reads.availabilityThreshold(), reads.availabilityStep()));
        }
        b.endToEndOperationLatencyPolicyConfig(e2e.build());
        b.throttlingRetryOptions(new ThrottlingRetryOptions()
                .setMaxRetryAttemptsOnThrottledRequests(reads.throttleRetries())
                .setMaxRetryWaitTime(reads.throttleMaxWait().isZero() ? Duration.ofMillis(1) : reads.throttleMaxWait()));
        b.clientTelemetryConfig(new CosmosClientTelemetryConfig()
                .diagnosticsThresholds(new CosmosDiagnosticsThresholds()
                        .setPointOperationLatencyThreshold(reads.diagnosticsPoint())
                        .setNonPointOperationLatencyThreshold(reads.diagnosticsQuery()))
                .diagnosticsHandler(new SlowCosmosLog()));
        if (cosmos.mode() == CosmosSettings.ConnectionMode.GATEWAY) {
            // Replaces the shared gateway config: same idle timeout, read-service's own (smaller) pool.
            b.gatewayMode(new GatewayConnectionConfig().setMaxConnectionPoolSize(reads.gatewayMaxConnections())
                    .setIdleConnectionTimeout(cosmos.idleConnectionTimeout()));
        }
        if (cosmos.mode() == CosmosSettings.ConnectionMode.DIRECT) {
            b.openConnectionsAndInitCaches(new CosmosContainerProactiveInitConfigBuilder(
                    List.of(new CosmosContainerIdentity(cosmos.database(), cosmos.container())))
                    .setProactiveConnectionRegionsCount(Math.max(1, Math.min(cosmos.preferredRegions().size(), 5)))
                    .setAggressiveWarmupDuration(reads.warmupTimeout())
                    .build());
        }
        return b;
    }

    /**
     * Sends {@code read.cosmos.warmup-requests} concurrent reads and waits for them, at most
     * {@code read.cosmos.warmup-timeout.ms}. Called once on the starting thread, never on an event loop.
     * Failures are logged, not thrown: readiness reports an unreachable store.
     */
    static void warmUp(BucketStore store, ReadSettings.CosmosReads reads) {
        if (reads.warmupRequests() == 0) return;
        long start = System.nanoTime();
        try {
            Flux.range(0, reads.warmupRequests())
                    .flatMap(i -> store.probe().onErrorResume(e -> store.probe()), reads.warmupRequests())
                    .then()
                    .block(reads.warmupTimeout());
            log.info("Cosmos warm-up: {} reads in {} ms", reads.warmupRequests(), (System.nanoTime() - start) / 1_000_000);
        } catch (RuntimeException e) {
            log.warn("Cosmos warm-up did not complete ({}); starting anyway, readiness will tell", e.getClass().getSimpleName());
        }
    }
}
