package io.tally.cosmos;

import io.tally.config.Config;
import io.tally.config.Setting;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * How to reach the Cosmos container. Shared by ingest-app and read-service so both address the same
 * documents. The defaults reach the local endpoint started by {@code ./tally stack up}.
 */
public record CosmosSettings(String endpoint, String key, String database, String container,
                             ConnectionMode mode, Duration endToEndTimeout, boolean createIfMissing,
                             boolean endpointDiscovery) {

    /** The public, well-known key of the Cosmos DB emulator; the local endpoint accepts any key. */
    public static final String EMULATOR_KEY =
            "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

    public enum ConnectionMode { GATEWAY, DIRECT }

    public static final Setting<String> ENDPOINT = Setting.string("cosmos.endpoint", "https://127.0.0.1:8081",
            "Cosmos DB account endpoint.");
    public static final Setting<String> KEY = Setting.string("cosmos.key", EMULATOR_KEY,
            "Cosmos DB account key; set it from the environment or a file, never on a command line in production.").secret();
    public static final Setting<String> DATABASE = Setting.string("cosmos.database", "tally", "Database name.");
    public static final Setting<String> CONTAINER = Setting.string("cosmos.container", "buckets",
            "Container of bucket documents (partition key /pk).");
    public static final Setting<String> MODE = Setting.string("cosmos.connection-mode", "gateway",
            "gateway or direct. Direct is faster against Azure; the local endpoint and the emulator need gateway.")
            .validate(v -> List.of("gateway", "direct").contains(v.toLowerCase(Locale.ROOT)), "must be gateway or direct");
    public static final Setting<Duration> E2E_TIMEOUT = Setting.millis("cosmos.end-to-end-timeout.ms", 2000,
            "End-to-end timeout of one Cosmos operation, retries included.");
    public static final Setting<Boolean> CREATE = Setting.bool("cosmos.create-if-missing", true,
            "Create the database and container at start when they do not exist.");

    public static final Setting<String> DISCOVERY = Setting.string("cosmos.endpoint-discovery", "auto",
            "Follow the regions the account advertises: true, false, or auto (false for 127.0.0.1/localhost, true otherwise). "
                    + "Set false for an emulator reached by a service name, which may advertise an address the client cannot reach.")
            .validate(v -> List.of("auto", "true", "false").contains(v), "must be auto, true or false");

    public static final List<Setting<?>> ALL = List.of(ENDPOINT, KEY, DATABASE, CONTAINER, MODE, E2E_TIMEOUT, CREATE, DISCOVERY);

    public static CosmosSettings from(Config c) {
        String endpoint = c.get(ENDPOINT);
        boolean discovery = switch (c.get(DISCOVERY)) {
            case "true" -> true;
            case "false" -> false;
            default -> !isLocal(endpoint); // one local endpoint has no other regions to discover
        };
        return new CosmosSettings(endpoint, c.get(KEY), c.get(DATABASE), c.get(CONTAINER),
                ConnectionMode.valueOf(c.get(MODE).toUpperCase(Locale.ROOT)), c.get(E2E_TIMEOUT), c.get(CREATE), discovery);
    }

    static boolean isLocal(String endpoint) {
        return endpoint.contains("://127.0.0.1") || endpoint.contains("://localhost");
    }

    @Override
    public String toString() { // the key never reaches a log
        return "CosmosSettings[endpoint=" + endpoint + ", database=" + database + ", container=" + container
                + ", mode=" + mode + ", endToEndTimeout=" + endToEndTimeout + ", endpointDiscovery=" + endpointDiscovery + "]";
    }
}
