package io.tally.read;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Setting;
import io.tally.cosmos.CosmosSettings;
import io.tally.rules.GradeRules;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Everything read-service reads, parsed once into typed records; cross-field checks fail at start,
 * listing every problem.
 *
 * @param rulesLocation the rules file, answered with only when the container holds no rules record
 * @param rulesRefresh  how often the rules record is read again
 * @param api    limits of the HTTP API (request timeout, range sizes, key lengths)
 * @param auth   optional API-key authentication
 * @param reads  how the Cosmos client is tuned for reads
 * @param shutdownDrain  how long a stopping service keeps serving with readiness 503 before it closes its port
 */
public record ReadSettings(String host, int port, CosmosSettings cosmos, String rulesLocation, Duration rulesRefresh,
                           Api api, Auth auth, CosmosReads reads, Duration shutdownDrain) {
    public static final String NONE = "none";

    public static final Setting<String> HOST = Setting.string("read.http.host", "127.0.0.1", "Address the HTTP API binds to.");
    public static final Setting<Integer> PORT = Setting.integer("read.http.port", 8080,
            "Port of the HTTP API (0 picks a free one).").atLeast(0);
    public static final Setting<String> RULES_FILE = Setting.string("read.rules-file", GradeRules.BUILTIN_DEFAULT,
            "Grade rules (YAML or JSON) whose grades and units the API accepts when the bucket container holds no rules "
                    + "record (a deployment from before the record existed): give it ingest-app's. With a record, the rules it "
                    + "applied are answered and this file is not used. The default is the rule set shipped in the jar, "
                    + "rules/default-rules.yaml.");
    public static final Setting<Duration> RULES_REFRESH = Setting.millis("read.rules-refresh.ms", 10_000,
            "How often the rules record is read again: a rules change (or a grade's history counted in) is answered at "
                    + "most this long after it was recorded. A failed read keeps the rules answered so far.")
            .validate(d -> !d.isZero(), "must be > 0");

    public static final Setting<Duration> REQUEST_TIMEOUT = Setting.millis("read.request-timeout.ms", 1000,
            "Longest an API request may take, Cosmos retries included; beyond it the answer is 504.");
    public static final Setting<Integer> MAX_RANGE_BUCKETS = Setting.integer("read.max-range-buckets", 1000,
            "Most buckets one range query or roll-up may span (e.g. 1000 = 41 days of hours); a wider range is 400.")
            .atLeast(1);
    public static final Setting<Integer> MAX_KEY_LENGTH = Setting.integer("read.max-key-length", 1801,
            "Longest partition key, bucket id, grade or qualifier accepted in a request, in UTF-8 bytes; longer is 400. "
            + "The default serves every key ingest-app stores (a domain, entity key or qualifier value of at most 900 bytes "
            + "each: a pk of 900 + 1 + 900); at most 2048, Cosmos' limit for a partition key.")
            .atLeast(8).validate(v -> v <= 2048, "must be from 8 to 2048");
    public static final Setting<Integer> MAX_FEATURE_BUCKETS = Setting.integer("read.features.max-buckets", 2000,
            "Most buckets the feature-vector endpoint returns for one entity (qualifier grades such as per-SKU spend "
                    + "can hold many); beyond it the answer is marked truncated.").atLeast(1);

    public static final Setting<Integer> MAX_IN_FLIGHT = Setting.integer("read.max-in-flight-requests", 256,
            "Most /v1 requests served at once; one more is answered 503 with Retry-After: 1 at once instead of queueing. "
                    + "Healthy, 3,000 req/s at a 50 ms p99 keep about 150 in flight; the bound stops an overload from growing "
                    + "queues (memory, GC) until every request times out.").atLeast(1);

    public static final Setting<Boolean> AUTH_ENABLED = Setting.bool("read.auth.enabled", false,
            "Require an API key (header X-API-Key, or Authorization: ApiKey <key>) on every /v1 route. "
                    + "Health, metrics and the OpenAPI document stay open.");
    public static final Setting<String> AUTH_KEYS = Setting.string("read.auth.api-keys", NONE,
            "Comma-separated accepted API keys; set it from the environment (TALLY_READ_AUTH_API_KEYS), never a flag. "
                    + "`none` = no keys from here.").secret();
    public static final Setting<String> AUTH_KEYS_FILE = Setting.string("read.auth.api-keys-file", NONE,
            "File with accepted API keys, one per line (blank lines and # comments ignored); `none` = no file.");

    public static final Setting<Duration> COSMOS_E2E_TIMEOUT = Setting.millis("read.cosmos.end-to-end-timeout.ms", 800,
            "End-to-end latency policy of each Cosmos read (retries and hedging included); the SDK cancels the "
                    + "operation after it. Keep it below read.request-timeout.ms so the SDK, not the HTTP layer, gives up first.");
    public static final Setting<Integer> COSMOS_THROTTLE_RETRIES = Setting.integer("read.cosmos.throttle-retries", 2,
            "How often the SDK retries a read that Cosmos answered 429 before the API answers 503 with Retry-After. "
                    + "Low on purpose: a caller waiting on a verdict is better served by a fast 503 than a slow 200.").atLeast(0);
    public static final Setting<Duration> COSMOS_THROTTLE_MAX_WAIT = Setting.millis("read.cosmos.throttle-max-wait.ms", 250,
            "Most time the SDK spends waiting out 429s for one read.");
    public static final Setting<Duration> AVAILABILITY_THRESHOLD = Setting.millis("read.cosmos.availability-threshold.ms", 25,
            "With more than one cosmos.preferred-regions: a read not answered after this long is also sent to the next "
                    + "region (threshold-based availability strategy); the first answer wins.");
    public static final Setting<Duration> AVAILABILITY_STEP = Setting.millis("read.cosmos.availability-threshold-step.ms", 10,
            "Delay between hedged reads to further regions after the first.");
    public static final Setting<Duration> DIAG_POINT = Setting.millis("read.cosmos.diagnostics.point-threshold.ms", 100,
            "Cosmos point reads slower than this are logged (WARN, logger io.tally.read.SlowCosmosLog; full diagnostics at DEBUG).");
    public static final Setting<Duration> DIAG_QUERY = Setting.millis("read.cosmos.diagnostics.query-threshold.ms", 250,
            "Cosmos diagnostics of a query slower than this are logged.");
    public static final Setting<Integer> WARMUP_REQUESTS = Setting.integer("read.cosmos.warmup-requests", 8,
            "Concurrent reads sent at start to open connections and fill the SDK's caches before the port opens "
                    + "(Direct mode also uses the SDK's proactive connection warm-up); 0 = none.").atLeast(0);
    public static final Setting<Duration> WARMUP_TIMEOUT = Setting.millis("read.cosmos.warmup-timeout.ms", 10_000,
            "Longest the start-up warm-up may take; the service starts anyway after it (readiness tells the truth).");
    public static final Setting<Integer> GATEWAY_MAX_CONNECTIONS = Setting.integer("read.cosmos.gateway.max-connections", 128,
            "Gateway mode: most HTTPS connections of read-service's Cosmos client; replaces cosmos.gateway.max-connection-pool-size "
                    + "(1000) for reads. Bounded so that a burst queues for a pooled connection instead of opening hundreds of TLS "
                    + "handshakes at once, which on a busy host turns a spike into a collapse.").atLeast(1);
    public static final Setting<Duration> READY_TIMEOUT = Setting.millis("read.ready.timeout.ms", 1000,
            "Timeout of the Cosmos reachability probe behind /health/ready.");

    public static final Setting<Duration> SHUTDOWN_DRAIN = Setting.millis("read.shutdown.drain.ms", 2000,
            "After a stop signal (SIGTERM), how long the service keeps answering requests with /health/ready already 503 "
                    + "before it closes its port, so load balancers take it out of rotation first; 0 = close at once.");

    private static final List<Setting<?>> OWN = List.of(HOST, PORT, RULES_FILE, RULES_REFRESH, REQUEST_TIMEOUT, MAX_RANGE_BUCKETS,
            MAX_KEY_LENGTH, MAX_FEATURE_BUCKETS, MAX_IN_FLIGHT, AUTH_ENABLED, AUTH_KEYS, AUTH_KEYS_FILE, COSMOS_E2E_TIMEOUT,
            COSMOS_THROTTLE_RETRIES, COSMOS_THROTTLE_MAX_WAIT, AVAILABILITY_THRESHOLD, AVAILABILITY_STEP, DIAG_POINT,
            DIAG_QUERY, WARMUP_REQUESTS, WARMUP_TIMEOUT, GATEWAY_MAX_CONNECTIONS, READY_TIMEOUT, SHUTDOWN_DRAIN);

    /** Limits of the HTTP API. */
    public record Api(Duration requestTimeout, int maxRangeBuckets, int maxKeyLength, int maxFeatureBuckets, int maxInFlight) {}

    /** API-key authentication; {@code keys} is never printed. */
    public record Auth(boolean enabled, List<String> keys) {
        @Override
        public String toString() {
            return "Auth[enabled=" + enabled + ", keys=" + keys.size() + "]";
        }
    }

    /** Cosmos client tuning for reads. */
    public record CosmosReads(Duration endToEndTimeout, int throttleRetries, Duration throttleMaxWait,
                              Duration availabilityThreshold, Duration availabilityStep, Duration diagnosticsPoint,
                              Duration diagnosticsQuery, int warmupRequests, Duration warmupTimeout, int gatewayMaxConnections,
                              Duration readyTimeout) {}

    public static List<Setting<?>> all() {
        List<Setting<?>> all = new ArrayList<>(OWN);
        all.addAll(CosmosSettings.ALL);
        return all;
    }

    public static ReadSettings load(String[] args, Map<String, String> env) {
        Config c = Config.load(all(), List.of(), args, env);
        List<String> problems = new ArrayList<>();

        List<String> keys = new ArrayList<>(splitKeys(c.get(AUTH_KEYS)));
        String keysFile = c.get(AUTH_KEYS_FILE);
        if (!keysFile.equalsIgnoreCase(NONE)) {
            try {
                Files.readAllLines(Path.of(keysFile)).stream().map(String::trim)
                        .filter(l -> !l.isEmpty() && !l.startsWith("#")).forEach(keys::add);
            } catch (IOException e) {
                problems.add(AUTH_KEYS_FILE.key() + ": cannot read " + keysFile + " (" + e.getClass().getSimpleName() + ")");
            }
        }
        boolean authOn = c.get(AUTH_ENABLED);
        if (authOn && keys.isEmpty() && problems.isEmpty()) {
            problems.add(AUTH_ENABLED.key() + " is true but no key is configured (set " + AUTH_KEYS.envName()
                    + " or " + AUTH_KEYS_FILE.key() + ")");
        }
        Duration requestTimeout = c.get(REQUEST_TIMEOUT);
        Duration e2e = c.get(COSMOS_E2E_TIMEOUT);
        if (requestTimeout.isZero()) problems.add(REQUEST_TIMEOUT.key() + " must be > 0");
        if (e2e.isZero()) problems.add(COSMOS_E2E_TIMEOUT.key() + " must be > 0");
        if (e2e.compareTo(requestTimeout) > 0) {
            problems.add(COSMOS_E2E_TIMEOUT.key() + " (" + e2e.toMillis() + " ms) must not exceed "
                    + REQUEST_TIMEOUT.key() + " (" + requestTimeout.toMillis() + " ms)");
        }
        if (!problems.isEmpty()) throw new ConfigException(problems);

        return new ReadSettings(c.get(HOST), c.get(PORT), CosmosSettings.from(c), c.get(RULES_FILE), c.get(RULES_REFRESH),
                new Api(requestTimeout, c.get(MAX_RANGE_BUCKETS), c.get(MAX_KEY_LENGTH), c.get(MAX_FEATURE_BUCKETS),
                        c.get(MAX_IN_FLIGHT)),
                new Auth(authOn, List.copyOf(keys)),
                new CosmosReads(e2e, c.get(COSMOS_THROTTLE_RETRIES), c.get(COSMOS_THROTTLE_MAX_WAIT),
                        c.get(AVAILABILITY_THRESHOLD), c.get(AVAILABILITY_STEP), c.get(DIAG_POINT), c.get(DIAG_QUERY),
                        c.get(WARMUP_REQUESTS), c.get(WARMUP_TIMEOUT), c.get(GATEWAY_MAX_CONNECTIONS), c.get(READY_TIMEOUT)),
                c.get(SHUTDOWN_DRAIN));
    }

    private static List<String> splitKeys(String raw) {
        if (raw.trim().equalsIgnoreCase(NONE)) return List.of();
        return Arrays.stream(raw.split(",")).map(String::trim).filter(k -> !k.isEmpty()).toList();
    }
}
