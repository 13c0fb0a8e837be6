package io.tally.cosmos;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Setting;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How to reach the Cosmos container. Shared by ingest-app and read-service so both address the same
 * documents. The defaults reach the local endpoint started by {@code ./tally stack up}.
 */
public record CosmosSettings(String endpoint, String key, String database, String container,
                             ConnectionMode mode, Duration endToEndTimeout, boolean createIfMissing,
                             boolean endpointDiscovery, List<String> preferredRegions,
                             int gatewayMaxConnectionPoolSize, Duration idleConnectionTimeout, Duration directConnectTimeout,
                             int directMaxConnectionsPerEndpoint, boolean warmUp, Duration diagnosticsLatencyThreshold,
                             int diagnosticsRuThreshold, String userAgentSuffix, boolean indexAllPaths,
                             CosmosAuth auth, CosmosThroughput throughput) {

    /** The public, well-known key of the Cosmos DB emulator; the local endpoint accepts any key. */
    public static final String EMULATOR_KEY =
            "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

    public enum ConnectionMode { GATEWAY, DIRECT }

    public static final Setting<String> ENDPOINT = Setting.string("cosmos.endpoint", "https://127.0.0.1:8081",
            "Cosmos DB account endpoint.");
    public static final Setting<String> KEY = Setting.string("cosmos.key", EMULATOR_KEY,
            "Cosmos DB account key (with `cosmos.auth=key`); set it from the environment or a file, never on a command line in production.").secret();
    public static final Setting<String> DATABASE = Setting.string("cosmos.database", "tally", "Database name.");
    public static final Setting<String> CONTAINER = Setting.string("cosmos.container", "buckets",
            "Container of bucket documents (partition key /pk).");
    public static final Setting<String> MODE = Setting.string("cosmos.connection-mode", "gateway",
            "gateway or direct. Direct is faster against Azure; the local endpoint and the emulator need gateway.")
            .validate(v -> List.of("gateway", "direct").contains(v.toLowerCase(Locale.ROOT)), "must be gateway or direct");
    public static final Setting<Duration> E2E_TIMEOUT = Setting.millis("cosmos.end-to-end-timeout.ms", 2000,
            "End-to-end timeout of one Cosmos operation, retries included.");
    public static final Setting<Boolean> CREATE = Setting.bool("cosmos.create-if-missing", true,
            "Create the database and container at start when they do not exist. Only with `cosmos.auth=key`: Cosmos refuses "
                    + "control-plane operations to an Entra ID token, so provision them first (docs/azure.md) and set this false.");
    public static final Setting<Boolean> INDEX_ALL = Setting.bool("cosmos.index-all-paths", false,
            "Create the container with Cosmos DB's default indexing policy (every path) instead of only the paths "
            + "read-service queries (grade, unit, bucket); every indexed path makes every write dearer. Applies when the container is "
            + "created; an existing container keeps its policy (docs/sink.md, Indexing).");

    public static final Setting<String> DISCOVERY = Setting.string("cosmos.endpoint-discovery", "auto",
            "Follow the regions the account advertises: true, false, or auto (false for 127.0.0.1/localhost, true otherwise). "
                    + "Set false for an emulator reached by a service name, which may advertise an address the client cannot reach.")
            .validate(v -> List.of("auto", "true", "false").contains(v), "must be auto, true or false");

    public static final Setting<String> PREFERRED_REGIONS = Setting.string("cosmos.preferred-regions", "none",
            "Comma-separated Azure regions to use, in order of preference (e.g. `West Europe,North Europe`); `none` keeps "
                    + "the account's own order. With more than one, read-service hedges slow reads to the next region.");

    // Client tuning, applied by CosmosClients to every client it builds.
    public static final Setting<Integer> GATEWAY_POOL = Setting.integer("cosmos.gateway.max-connection-pool-size", 1000,
            "Gateway mode: HTTP connections per client (SDK default 1000). The sink keeps at most "
                    + "`sink.concurrency.max` bulk requests in flight; lower it where many processes share a quota.").atLeast(1);
    public static final Setting<Duration> IDLE_TIMEOUT = Setting.millis("cosmos.idle-connection-timeout.ms", 60_000,
            "Close a pooled connection after it was idle this long (both modes).");
    public static final Setting<Duration> CONNECT_TIMEOUT = Setting.millis("cosmos.direct.connect-timeout.ms", 5_000,
            "Direct mode: TCP connect timeout to a replica.");
    public static final Setting<Integer> DIRECT_CONNECTIONS = Setting.integer("cosmos.direct.max-connections-per-endpoint", 130,
            "Direct mode: connections per replica endpoint (SDK default 130).").atLeast(1);
    public static final Setting<Boolean> WARM_UP = Setting.bool("cosmos.warm-up", true,
            "Open connections and fill the container's address and metadata caches at start "
                    + "(openConnectionsAndInitCaches), so the first writes do not pay for them.");
    public static final Setting<Duration> DIAG_LATENCY = Setting.millis("cosmos.diagnostics.latency-threshold.ms", 1000,
            "Log an operation's full diagnostics (retries, regions, request charge) when it takes longer than this.");
    public static final Setting<Integer> DIAG_RU = Setting.integer("cosmos.diagnostics.request-charge-threshold", 1000,
            "Log an operation's full diagnostics when it costs more request units than this.").atLeast(1);
    public static final Setting<String> USER_AGENT = Setting.string("cosmos.user-agent-suffix", "tally",
            "Appended to the SDK's user agent: tells this application apart in the account's diagnostic logs.");

    public static final List<Setting<?>> ALL = concat(List.of(ENDPOINT, KEY, DATABASE, CONTAINER, MODE, E2E_TIMEOUT, CREATE, DISCOVERY,
            PREFERRED_REGIONS, GATEWAY_POOL, IDLE_TIMEOUT, CONNECT_TIMEOUT, DIRECT_CONNECTIONS, WARM_UP, DIAG_LATENCY, DIAG_RU,
            USER_AGENT, INDEX_ALL), CosmosAuth.ALL, CosmosThroughput.ALL);

    @SafeVarargs
    private static List<Setting<?>> concat(List<Setting<?>>... lists) {
        List<Setting<?>> all = new ArrayList<>();
        for (List<Setting<?>> l : lists) all.addAll(l);
        return List.copyOf(all);
    }

    public static CosmosSettings from(Config c) {
        String endpoint = c.get(ENDPOINT);
        boolean discovery = switch (c.get(DISCOVERY)) {
            case "true" -> true;
            case "false" -> false;
            default -> !isLocal(endpoint); // one local endpoint has no other regions to discover
        };
        List<String> problems = new ArrayList<>();
        CosmosAuth auth = CosmosAuth.from(c, problems);
        CosmosThroughput throughput = CosmosThroughput.from(c, problems);
        if (!auth.usesKey() && c.get(CREATE)) {
            // Refused rather than skipped: skipping would move the failure to the first write or read, as a 404
            // that looks like missing data, where here the cause and its one-setting fix are named at start.
            problems.add(CREATE.key() + "=true cannot work with " + CosmosAuth.MODE.key() + "=" + auth.mode().value()
                    + ": Cosmos DB does not let an Entra ID token create databases or containers (a control-plane operation; "
                    + "the service answers 403, sub-status 5300). Provision " + c.get(DATABASE) + "/" + c.get(CONTAINER)
                    + " with the Azure CLI or Bicep (docs/azure.md), then set " + CREATE.key() + "=false ("
                    + CREATE.envName() + "=false)");
        }
        if (!problems.isEmpty()) throw new ConfigException(problems);
        return new CosmosSettings(endpoint, c.get(KEY), c.get(DATABASE), c.get(CONTAINER),
                ConnectionMode.valueOf(c.get(MODE).toUpperCase(Locale.ROOT)), c.get(E2E_TIMEOUT), c.get(CREATE), discovery,
                regions(c.get(PREFERRED_REGIONS)),
                c.get(GATEWAY_POOL), c.get(IDLE_TIMEOUT), c.get(CONNECT_TIMEOUT), c.get(DIRECT_CONNECTIONS), c.get(WARM_UP),
                c.get(DIAG_LATENCY), c.get(DIAG_RU), c.get(USER_AGENT), c.get(INDEX_ALL), auth, throughput);
    }

    static List<String> regions(String raw) {
        if (raw.trim().equalsIgnoreCase("none")) return List.of();
        return java.util.Arrays.stream(raw.split(",")).map(String::trim).filter(r -> !r.isEmpty()).toList();
    }

    static boolean isLocal(String endpoint) {
        return endpoint.contains("://127.0.0.1") || endpoint.contains("://localhost");
    }

    @Override
    public String toString() { // the key and the client secret never reach a log
        return "CosmosSettings[endpoint=" + endpoint + ", database=" + database + ", container=" + container
                + ", mode=" + mode + ", endToEndTimeout=" + endToEndTimeout + ", endpointDiscovery=" + endpointDiscovery + ", preferredRegions=" + preferredRegions
                + ", gatewayMaxConnectionPoolSize=" + gatewayMaxConnectionPoolSize + ", warmUp=" + warmUp
                + ", userAgentSuffix=" + userAgentSuffix + ", indexAllPaths=" + indexAllPaths + ", auth=" + auth.describe()
                + ", throughput=" + throughput.describe() + "]";
    }
}
