package io.tally.schemas.serde;

import java.util.Map;

/** Configuration names shared with Confluent's serializers, so either implementation reads the same settings. */
public final class AvroSerdeConfig {
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    public static final String AUTO_REGISTER_SCHEMAS = "auto.register.schemas";
    public static final String USE_LATEST_VERSION = "use.latest.version";
    public static final String SPECIFIC_AVRO_READER = "specific.avro.reader";

    private AvroSerdeConfig() {}

    static String registryUrl(Map<String, ?> configs) {
        Object url = configs.get(SCHEMA_REGISTRY_URL);
        if (url == null || url.toString().isBlank()) {
            throw new IllegalArgumentException(SCHEMA_REGISTRY_URL + " is required for the Avro serde");
        }
        // Several comma-separated URLs are allowed; failover across them belongs to the full client.
        return url.toString().split(",")[0].trim();
    }

    static boolean flag(Map<String, ?> configs, String key, boolean defaultValue) {
        Object v = configs.get(key);
        return v == null ? defaultValue : Boolean.parseBoolean(v.toString());
    }

    static String subject(String topic, boolean isKey) {
        return topic + (isKey ? "-key" : "-value"); // Confluent's TopicNameStrategy
    }
}
