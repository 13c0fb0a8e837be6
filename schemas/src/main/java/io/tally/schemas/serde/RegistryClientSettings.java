package io.tally.schemas.serde;

import io.tally.config.Setting;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Everything a {@link SchemaRegistryClient} needs, parsed and validated (see {@link AvroSerdeConfig#parse}).
 *
 * @param urls            base URLs, tried in order; failover on I/O errors and 5xx. Never carry user info.
 * @param userInfo        {@code user:password} for HTTP basic auth, if any. Never logged.
 * @param retry           retries for retriable failures
 * @param cacheCapacity   bound of each cache (ids, schemas, latest versions)
 * @param connectTimeout  TCP connect timeout per URL
 * @param requestTimeout  whole-request timeout per URL and attempt
 * @param latestCacheTtl  how long a subject's latest version is reused; {@code null} = until evicted (Confluent's -1)
 * @param missingIdCacheTtl how long an id the registry answered "not found" (40403) is answered so without asking
 *                        again; zero = always ask (Confluent's default)
 * @param missingCacheSize bound of the cache of missing ids
 */
public record RegistryClientSettings(
        List<URI> urls,
        Optional<String> userInfo,
        RetryPolicy retry,
        int cacheCapacity,
        Duration connectTimeout,
        Duration requestTimeout,
        Duration latestCacheTtl,
        Duration missingIdCacheTtl,
        int missingCacheSize) {

    public static final int DEFAULT_CACHE_CAPACITY = 1000;
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MISSING_CACHE_SIZE = 10_000;

    /**
     * Basic-auth credentials of the registry, for every application that talks to it. A setting of its own rather
     * than user info in {@code schema.registry.url}, so the password is a secret the settings never print.
     */
    public static final Setting<String> USER_INFO = Setting.optionalString("schema.registry.basic-auth.user-info", "",
            "`user:password` for HTTP basic auth at the schema registry (a managed registry's API key and secret); empty = "
                    + "none, or user info in `schema.registry.url`. Set it from the environment or a file.")
            .validate(v -> v.isEmpty() || v.contains(":"), "must be user:password").secret();

    public RegistryClientSettings {
        urls = List.copyOf(urls);
        if (urls.isEmpty()) throw new IllegalArgumentException("at least one schema registry URL is required");
        if (cacheCapacity < 1) throw new IllegalArgumentException("cacheCapacity must be >= 1");
        if (missingIdCacheTtl == null || missingIdCacheTtl.isNegative()) throw new IllegalArgumentException("missingIdCacheTtl must be >= 0");
        if (missingCacheSize < 1) throw new IllegalArgumentException("missingCacheSize must be >= 1");
    }

    /** Defaults for everything but the URLs (a comma-separated list; user info in a URL becomes basic auth). */
    public static RegistryClientSettings forUrls(String commaSeparatedUrls) {
        return AvroSerdeConfig.parse(java.util.Map.of(AvroSerdeConfig.SCHEMA_REGISTRY_URL, commaSeparatedUrls)).registry();
    }

    /** As {@link #forUrls(String)}, with basic-auth credentials from {@link #USER_INFO} when {@code userInfo} is not empty. */
    public static RegistryClientSettings forUrls(String commaSeparatedUrls, String userInfo) {
        if (userInfo.isEmpty()) return forUrls(commaSeparatedUrls);
        return AvroSerdeConfig.parse(java.util.Map.of(AvroSerdeConfig.SCHEMA_REGISTRY_URL, commaSeparatedUrls,
                AvroSerdeConfig.BASIC_AUTH_CREDENTIALS_SOURCE, AvroSerdeConfig.CredentialsSource.USER_INFO.name(),
                AvroSerdeConfig.BASIC_AUTH_USER_INFO, userInfo)).registry();
    }

    /** The same settings with another retry policy (tests use short waits). */
    public RegistryClientSettings withRetry(RetryPolicy policy) {
        return new RegistryClientSettings(urls, userInfo, policy, cacheCapacity, connectTimeout, requestTimeout, latestCacheTtl,
                missingIdCacheTtl, missingCacheSize);
    }

    /** The same settings, remembering ids the registry does not know for {@code ttl} (zero: never). */
    public RegistryClientSettings withMissingIdCacheTtl(Duration ttl) {
        return new RegistryClientSettings(urls, userInfo, retry, cacheCapacity, connectTimeout, requestTimeout, latestCacheTtl,
                ttl, missingCacheSize);
    }

    @Override
    public String toString() { // keeps the password out of logs and exception messages
        return "RegistryClientSettings[urls=" + urls + ", basicAuth=" + userInfo.isPresent() + ", retry=" + retry
                + ", cacheCapacity=" + cacheCapacity + ", connectTimeout=" + connectTimeout
                + ", requestTimeout=" + requestTimeout + ", latestCacheTtl=" + latestCacheTtl
                + ", missingIdCacheTtl=" + missingIdCacheTtl + ", missingCacheSize=" + missingCacheSize + "]";
    }
}
