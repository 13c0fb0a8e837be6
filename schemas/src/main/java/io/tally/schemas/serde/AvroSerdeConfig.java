package io.tally.schemas.serde;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.SerializationException;

/**
 * The serde's settings, under Confluent's names so one Kafka client configuration works with either
 * implementation (docs/confluent-serializers.md lists what differs). Parsed once into typed fields;
 * {@link #parse} reports every problem of a configuration at once, not just the first.
 *
 * <p>Values may be strings (from properties files) or typed objects (Boolean, Number).
 */
public final class AvroSerdeConfig {
    /** Comma-separated base URLs; the next one is tried on I/O errors and 5xx answers. */
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    /** Register the record's schema under the subject on first use (default true). */
    public static final String AUTO_REGISTER_SCHEMAS = "auto.register.schemas";
    /** Serializer: write with the subject's latest registered schema instead of the record's own (default false). */
    public static final String USE_LATEST_VERSION = "use.latest.version";
    /** Seconds a subject's latest version is reused; -1 (default) = until evicted from the cache. */
    public static final String LATEST_CACHE_TTL_SEC = "latest.cache.ttl.sec";
    /**
     * Seconds an id the registry answered "not found" (40403) is answered so again without a request; 0 (default, as
     * Confluent's) = ask every time. Bounds the registry requests a stream of records with unknown ids causes.
     */
    public static final String MISSING_ID_CACHE_TTL_SEC = "missing.id.cache.ttl.sec";
    /** Bound of the cache of missing ids (default 10000). */
    public static final String MISSING_CACHE_SIZE = "missing.cache.size";
    /** Deserializer: return generated SpecificRecord classes instead of GenericRecord (default false). */
    public static final String SPECIFIC_AVRO_READER = "specific.avro.reader";
    /** Generic deserializer: decimal as BigDecimal, timestamp-millis as Instant, ... (default false: raw Avro types). */
    public static final String AVRO_USE_LOGICAL_TYPE_CONVERTERS = "avro.use.logical.type.converters";
    /** Where basic-auth credentials come from: URL (user info in the URL, default) or USER_INFO. */
    public static final String BASIC_AUTH_CREDENTIALS_SOURCE = "basic.auth.credentials.source";
    /** {@code user:password} when the source is USER_INFO. */
    public static final String BASIC_AUTH_USER_INFO = "basic.auth.user.info";
    /** Alias of {@link #BASIC_AUTH_USER_INFO} that Confluent's clients also accept. */
    public static final String SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO = "schema.registry.basic.auth.user.info";
    /** Retries after the first attempt for I/O errors and 5xx (default 3). */
    public static final String MAX_RETRIES = "max.retries";
    /** Cap of the first backoff, doubled per retry, full jitter (default 1000). */
    public static final String RETRIES_WAIT_MS = "retries.wait.ms";
    /** Largest backoff cap (default 20000). */
    public static final String RETRIES_MAX_WAIT_MS = "retries.max.wait.ms";
    /** Bound of each client cache (default 1000). */
    public static final String MAX_SCHEMAS_PER_SUBJECT = "max.schemas.per.subject";
    /** TCP connect timeout per URL (default 10000). */
    public static final String HTTP_CONNECT_TIMEOUT_MS = "http.connect.timeout.ms";
    /** Whole-request timeout per URL and attempt (default 30000). */
    public static final String HTTP_READ_TIMEOUT_MS = "http.read.timeout.ms";
    /**
     * Which subject a key's schema is registered and looked up under: a {@link SubjectNameStrategy} short name,
     * Confluent's class name or that class (default TopicNameStrategy, {@code <topic>-key}).
     */
    public static final String KEY_SUBJECT_NAME_STRATEGY = "key.subject.name.strategy";
    /** As {@link #KEY_SUBJECT_NAME_STRATEGY}, for values (default {@code <topic>-value}). */
    public static final String VALUE_SUBJECT_NAME_STRATEGY = "value.subject.name.strategy";

    public enum CredentialsSource { URL, USER_INFO }

    private final RegistryClientSettings registry;
    private final boolean autoRegister;
    private final boolean useLatestVersion;
    private final boolean specificReader;
    private final boolean logicalTypeConverters;
    private final SubjectNameStrategy keySubjectStrategy;
    private final SubjectNameStrategy valueSubjectStrategy;

    private AvroSerdeConfig(RegistryClientSettings registry, boolean autoRegister, boolean useLatestVersion,
                            boolean specificReader, boolean logicalTypeConverters,
                            SubjectNameStrategy keySubjectStrategy, SubjectNameStrategy valueSubjectStrategy) {
        this.registry = registry;
        this.autoRegister = autoRegister;
        this.useLatestVersion = useLatestVersion;
        this.specificReader = specificReader;
        this.logicalTypeConverters = logicalTypeConverters;
        this.keySubjectStrategy = keySubjectStrategy;
        this.valueSubjectStrategy = valueSubjectStrategy;
    }

    /** Parses a configuration that must name the registry. */
    public static AvroSerdeConfig parse(Map<String, ?> configs) {
        return parse(configs, true);
    }

    /**
     * Parses a configuration; with {@code urlRequired=false} (the caller already has a client) a missing
     * URL is fine and {@link #registry()} is then null.
     *
     * @throws ConfigException listing every invalid or inconsistent setting
     */
    public static AvroSerdeConfig parse(Map<String, ?> configs, boolean urlRequired) {
        List<String> problems = new ArrayList<>();
        Parser p = new Parser(configs, problems);
        boolean autoRegister = p.bool(AUTO_REGISTER_SCHEMAS, true);
        boolean useLatest = p.bool(USE_LATEST_VERSION, false);
        boolean specific = p.bool(SPECIFIC_AVRO_READER, false);
        boolean converters = p.bool(AVRO_USE_LOGICAL_TYPE_CONVERTERS, false);
        if (autoRegister && useLatest) {
            // Confluent silently lets auto-registration win; a setting that is silently ignored is worse than none.
            problems.add(USE_LATEST_VERSION + "=true needs " + AUTO_REGISTER_SCHEMAS + "=false (the serializer would "
                    + "otherwise register the record's schema and never use the latest version)");
        }
        SubjectNameStrategy keyStrategy = p.strategy(KEY_SUBJECT_NAME_STRATEGY);
        SubjectNameStrategy valueStrategy = p.strategy(VALUE_SUBJECT_NAME_STRATEGY);

        int maxRetries = p.integer(MAX_RETRIES, 3, 0);
        long waitMs = p.integer(RETRIES_WAIT_MS, 1000, 0);
        long maxWaitMs = p.integer(RETRIES_MAX_WAIT_MS, 20_000, 0);
        int capacity = p.integer(MAX_SCHEMAS_PER_SUBJECT, RegistryClientSettings.DEFAULT_CACHE_CAPACITY, 1);
        long connectMs = p.integer(HTTP_CONNECT_TIMEOUT_MS, (int) RegistryClientSettings.DEFAULT_CONNECT_TIMEOUT.toMillis(), 1);
        long readMs = p.integer(HTTP_READ_TIMEOUT_MS, (int) RegistryClientSettings.DEFAULT_REQUEST_TIMEOUT.toMillis(), 1);
        long ttlSec = p.integer(LATEST_CACHE_TTL_SEC, -1, -1);
        long missingTtlSec = p.integer(MISSING_ID_CACHE_TTL_SEC, 0, 0);
        int missingSize = p.integer(MISSING_CACHE_SIZE, RegistryClientSettings.DEFAULT_MISSING_CACHE_SIZE, 1);

        RegistryClientSettings registry = null;
        List<URI> urls = new ArrayList<>();
        Optional<String> urlUserInfo = Optional.empty();
        Object rawUrls = configs.get(SCHEMA_REGISTRY_URL);
        String urlText = rawUrls instanceof List<?> list ? String.join(",", list.stream().map(String::valueOf).toList())
                : rawUrls == null ? "" : rawUrls.toString();
        for (String part : urlText.split(",")) {
            if (part.isBlank()) continue;
            try {
                URI uri = new URI(part.strip());
                if (uri.getScheme() == null || uri.getHost() == null
                        || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))) {
                    problems.add(SCHEMA_REGISTRY_URL + " entry '" + redact(part.strip()) + "' is not an http(s) URL with a host");
                    continue;
                }
                if (uri.getRawUserInfo() != null && urlUserInfo.isEmpty()) {
                    urlUserInfo = Optional.of(URLDecoder.decode(uri.getRawUserInfo(), StandardCharsets.UTF_8));
                }
                String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/"
                        : uri.getRawPath().endsWith("/") ? uri.getRawPath() : uri.getRawPath() + "/";
                urls.add(new URI(uri.getScheme(), null, uri.getHost(), uri.getPort(), null, null, null).resolve(path));
            } catch (URISyntaxException e) {
                problems.add(SCHEMA_REGISTRY_URL + " entry '" + redact(part.strip()) + "' is not a valid URL: " + e.getReason());
            }
        }
        if (urls.isEmpty() && urlRequired && problems.stream().noneMatch(s -> s.startsWith(SCHEMA_REGISTRY_URL))) {
            problems.add(SCHEMA_REGISTRY_URL + " is required (comma-separated http(s) URLs of a Confluent-API schema registry)");
        }

        Optional<String> userInfo = Optional.empty();
        String source = p.string(BASIC_AUTH_CREDENTIALS_SOURCE, CredentialsSource.URL.name()).toUpperCase(Locale.ROOT);
        String explicitUserInfo = p.string(BASIC_AUTH_USER_INFO, p.string(SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO, ""));
        switch (source) {
            case "URL" -> userInfo = urlUserInfo;
            case "USER_INFO" -> {
                if (explicitUserInfo.isBlank() || !explicitUserInfo.contains(":")) {
                    problems.add(BASIC_AUTH_CREDENTIALS_SOURCE + "=USER_INFO needs " + BASIC_AUTH_USER_INFO + " as user:password");
                } else {
                    userInfo = Optional.of(explicitUserInfo);
                }
            }
            default -> problems.add(BASIC_AUTH_CREDENTIALS_SOURCE + "=" + source + " is not supported (URL or USER_INFO;"
                    + " SASL_INHERIT and bearer tokens are not implemented)");
        }

        if (!problems.isEmpty()) {
            throw new ConfigException("Invalid Avro serde configuration:\n  - " + String.join("\n  - ", problems));
        }
        if (!urls.isEmpty()) {
            registry = new RegistryClientSettings(urls, userInfo,
                    new RetryPolicy(maxRetries, Duration.ofMillis(waitMs), Duration.ofMillis(Math.max(waitMs, maxWaitMs))),
                    capacity, Duration.ofMillis(connectMs), Duration.ofMillis(readMs),
                    ttlSec < 0 ? null : Duration.ofSeconds(ttlSec), Duration.ofSeconds(missingTtlSec), missingSize);
        }
        return new AvroSerdeConfig(registry, autoRegister, useLatest, specific, converters, keyStrategy, valueStrategy);
    }

    /** Client settings, or null when the URL was optional and absent. */
    public RegistryClientSettings registry() { return registry; }

    public boolean autoRegister() { return autoRegister; }

    public boolean useLatestVersion() { return useLatestVersion; }

    public boolean specificReader() { return specificReader; }

    public boolean logicalTypeConverters() { return logicalTypeConverters; }

    public SubjectNameStrategy keySubjectStrategy() { return keySubjectStrategy; }

    public SubjectNameStrategy valueSubjectStrategy() { return valueSubjectStrategy; }

    /**
     * The subject the serializer files {@code schema} under for {@code topic}, by the configured key or value
     * strategy.
     *
     * @throws SerializationException when a record-name strategy meets a schema that is not a record (Confluent's
     *     serializers refuse it too: enums, arrays and primitives have no name a subject could carry)
     */
    public String subject(String topic, boolean isKey, Schema schema) {
        SubjectNameStrategy strategy = isKey ? keySubjectStrategy : valueSubjectStrategy;
        if (strategy.usesRecordName() && schema.getType() != Schema.Type.RECORD) {
            String key = isKey ? KEY_SUBJECT_NAME_STRATEGY : VALUE_SUBJECT_NAME_STRATEGY;
            throw new SerializationException("In configuration " + key + " = " + strategy.shortName()
                    + ", the message must be an Avro record; topic " + topic + " got a schema of type "
                    + schema.getType().getName() + " (" + schema.getFullName() + ")");
        }
        return strategy.subject(topic, isKey, schema.getFullName());
    }

    /**
     * The default subject (Confluent's TopicNameStrategy): {@code <topic>-key} or {@code <topic>-value}, for code
     * that registers schemas itself for a serializer left at that default.
     */
    public static String subject(String topic, boolean isKey) {
        return SubjectNameStrategy.TOPIC_NAME.subject(topic, isKey, null);
    }

    /** A URL as it may appear in a message: without its user info. */
    static String redact(String url) {
        return url.replaceFirst("//[^/@]*@", "//***@");
    }

    /** Reads typed values, collecting problems instead of failing at the first. */
    private record Parser(Map<String, ?> configs, List<String> problems) {
        boolean bool(String key, boolean dflt) {
            Object v = configs.get(key);
            if (v == null) return dflt;
            if (v instanceof Boolean b) return b;
            String s = v.toString().strip();
            if (s.equalsIgnoreCase("true")) return true;
            if (s.equalsIgnoreCase("false")) return false;
            problems.add(key + "=" + s + " is not true or false");
            return dflt;
        }

        int integer(String key, int dflt, int min) {
            Object v = configs.get(key);
            if (v == null) return dflt;
            try {
                int n = v instanceof Number num ? num.intValue() : Integer.parseInt(v.toString().strip());
                if (n < min) {
                    problems.add(key + "=" + n + " must be >= " + min);
                    return dflt;
                }
                return n;
            } catch (NumberFormatException e) {
                problems.add(key + "=" + v + " is not an integer");
                return dflt;
            }
        }

        String string(String key, String dflt) {
            Object v = configs.get(key);
            return v == null ? dflt : v.toString();
        }

        SubjectNameStrategy strategy(String key) {
            Object v = configs.get(key);
            if (v == null) return SubjectNameStrategy.TOPIC_NAME;
            String name = v instanceof Class<?> c ? c.getName() : v.toString();
            try {
                return SubjectNameStrategy.parse(name);
            } catch (IllegalArgumentException e) {
                problems.add(key + ": " + e.getMessage());
                return SubjectNameStrategy.TOPIC_NAME;
            }
        }
    }
}
