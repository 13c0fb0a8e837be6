package io.tally.cosmos;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.ConsistencyLevel;
import com.azure.cosmos.CosmosDiagnosticsThresholds;
import com.azure.cosmos.DirectConnectionConfig;
import com.azure.cosmos.GatewayConnectionConfig;
import com.azure.cosmos.models.CosmosClientTelemetryConfig;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.ExcludedPath;
import com.azure.cosmos.models.IncludedPath;
import com.azure.cosmos.models.IndexingMode;
import com.azure.cosmos.models.IndexingPolicy;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds Cosmos clients and makes sure the bucket container exists. */
public final class CosmosClients {
    private static final Logger log = LoggerFactory.getLogger(CosmosClients.class);
    public static final String PARTITION_KEY_PATH = "/pk";

    private CosmosClients() {}

    /** Full diagnostics logged per window; beyond that only counted (see {@link SampledDiagnosticsLogger}). */
    static final int DIAGNOSTICS_LOGGED_PER_WINDOW = 5;
    static final Duration DIAGNOSTICS_WINDOW = Duration.ofSeconds(10);

    public static CosmosAsyncClient build(CosmosSettings s) {
        return build(s, UnaryOperator.identity());
    }

    /**
     * As {@link #build(CosmosSettings)}, letting the caller add its own options (read-service: end-to-end
     * latency policy, availability strategy, diagnostics thresholds, throttling retries) before the build.
     */
    public static CosmosAsyncClient build(CosmosSettings s, UnaryOperator<CosmosClientBuilder> customize) {
        CosmosClientBuilder b = new CosmosClientBuilder().endpoint(s.endpoint());
        if (s.auth().usesKey()) b.key(s.key());
        else b.credential(s.auth().tokenCredential());
        log.info("Cosmos client for {} authenticates with {}", s.endpoint(), s.auth().describe());
        b.consistencyLevel(ConsistencyLevel.SESSION)
                .contentResponseOnWriteEnabled(false)
                .endpointDiscoveryEnabled(s.endpointDiscovery());
        if (s.mode() == CosmosSettings.ConnectionMode.DIRECT) {
            b.directMode(DirectConnectionConfig.getDefaultConfig()
                    .setConnectTimeout(s.directConnectTimeout())
                    .setIdleConnectionTimeout(s.idleConnectionTimeout())
                    .setMaxConnectionsPerEndpoint(s.directMaxConnectionsPerEndpoint()));
        } else {
            b.gatewayMode(GatewayConnectionConfig.getDefaultConfig()
                    .setMaxConnectionPoolSize(s.gatewayMaxConnectionPoolSize())
                    .setIdleConnectionTimeout(s.idleConnectionTimeout()));
        }
        b.userAgentSuffix(s.userAgentSuffix());
        // Slow or expensive operations log their full diagnostics (retries, regions, request charge) once; sampled,
        // so an outage that fails every request logs a few in full and counts the rest.
        b.clientTelemetryConfig(new CosmosClientTelemetryConfig()
                .diagnosticsThresholds(new CosmosDiagnosticsThresholds()
                        .setPointOperationLatencyThreshold(s.diagnosticsLatencyThreshold())
                        .setNonPointOperationLatencyThreshold(s.diagnosticsLatencyThreshold())
                        .setRequestChargeThreshold(s.diagnosticsRuThreshold()))
                .diagnosticsHandler(new SampledDiagnosticsLogger(DIAGNOSTICS_LOGGED_PER_WINDOW, DIAGNOSTICS_WINDOW)));
        if (!s.preferredRegions().isEmpty()) b.preferredRegions(s.preferredRegions());
        return customize.apply(b).buildAsyncClient();
    }

    /**
     * Opens connections and fills the container's caches when {@code cosmos.warm-up} is set. A failure
     * is logged, not thrown: warm-up only moves the cost of the first requests forward.
     */
    public static void warmUp(CosmosAsyncContainer container, CosmosSettings s) {
        if (!s.warmUp()) return;
        try {
            container.openConnectionsAndInitCaches().block(Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            log.warn("Cosmos warm-up of {}/{} failed; the first requests open their own connections: {}",
                    s.database(), s.container(), e.toString());
        }
    }

    /**
     * The bucket container, created with partition key /pk, TTL enabled (-1: documents carry their own ttl) and the
     * throughput of {@code cosmos.throughput} when {@code createIfMissing} is set. docs/azure.md provisions the same
     * container outside Tally; keep the two in step.
     */
    public static CosmosAsyncContainer container(CosmosAsyncClient client, CosmosSettings s) {
        if (s.createIfMissing()) {
            existingOnConflict(client.createDatabaseIfNotExists(s.database()));
            CosmosContainerProperties props = containerProperties(s.container(), s.indexAllPaths());
            var database = client.getDatabase(s.database());
            existingOnConflict(s.throughput().properties()
                    .map(t -> database.createContainerIfNotExists(props, t))
                    .orElseGet(() -> database.createContainerIfNotExists(props)));
            log.info("Cosmos container {}/{} ready at {} (when created here: {})", s.database(), s.container(), s.endpoint(),
                    s.throughput().describe());
        }
        return client.getDatabase(s.database()).getContainer(s.container());
    }

    /**
     * The bucket container's definition: partition key /pk, TTL on with no default (-1: each document's own ttl),
     * and {@link #readPathsOnly()} unless every path is to be indexed. deploy/azure/container.json is this as JSON
     * (ContainerDefinitionTest), for provisioning outside Tally.
     */
    public static CosmosContainerProperties containerProperties(String name, boolean indexAllPaths) {
        CosmosContainerProperties props = new CosmosContainerProperties(name, PARTITION_KEY_PATH);
        props.setDefaultTimeToLiveInSeconds(-1);
        if (!indexAllPaths) props.setIndexingPolicy(readPathsOnly());
        return props;
    }

    /**
     * The container where the SDK's global throughput control keeps its lease items (sink.ru-budget shared by the fleet),
     * created when {@code createIfMissing} is set: partition key /groupId as the SDK requires, TTL on for the items' own
     * ttl. Small and rarely written (one item per client every few seconds), so it asks for no throughput of its own.
     */
    public static CosmosAsyncContainer throughputControlContainer(CosmosAsyncClient client, CosmosSettings s, String name) {
        if (s.createIfMissing()) {
            CosmosContainerProperties props = new CosmosContainerProperties(name, "/groupId");
            props.setDefaultTimeToLiveInSeconds(-1);
            existingOnConflict(client.getDatabase(s.database()).createContainerIfNotExists(props));
        }
        return client.getDatabase(s.database()).getContainer(name);
    }

    /**
     * Indexes only what read-service filters and sorts on: unit (equality), bucket (range and ORDER BY) and page
     * (a range query keeps to main documents, which have none); point reads and the partition key need no index.
     * Every indexed property costs request units on every write, and the sink writes each entity bucket many times,
     * so everything else (every grade's values, ver, ttl, updatedAt and any added later) is excluded: an entity
     * bucket costs three index terms however many grades it holds. A query that filters on an excluded path still
     * works inside one partition, at the cost of a scan of that partition.
     */
    public static IndexingPolicy readPathsOnly() {
        IndexingPolicy policy = new IndexingPolicy();
        policy.setIndexingMode(IndexingMode.CONSISTENT);
        policy.setAutomatic(true);
        policy.setIncludedPaths(List.of(new IncludedPath("/unit/?"), new IncludedPath("/bucket/?"), new IncludedPath("/page/?")));
        policy.setExcludedPaths(List.of(new ExcludedPath("/*")));
        return policy;
    }

    /**
     * "If not exists" is a read, then a create: two instances starting together both read 404, and the
     * slower create answers 409. The resource exists either way, which is all the caller asked for.
     */
    private static void existingOnConflict(reactor.core.publisher.Mono<?> createIfNotExists) {
        try {
            createIfNotExists.block(Duration.ofSeconds(30));
        } catch (com.azure.cosmos.CosmosException e) {
            if (e.getStatusCode() != 409) throw e;
            log.debug("created concurrently by another instance: {}", e.getMessage());
        }
    }
}
