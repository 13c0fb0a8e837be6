package io.tally.ingest.app;

import io.tally.config.Config;
import io.tally.schemas.KafkaSecrets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The pass-through settings of ingest-app's Kafka clients. Keys under {@code kafka.} reach every client;
 * {@code kafka.streams.}, {@code kafka.consumer.} and {@code kafka.producer.} reach one client each and win over a
 * shared key there. Kafka Streams keeps its own inner prefixes under its one ({@code kafka.streams.producer.linger.ms}
 * for its producers); the consumer is the sink's and replay's, the producer the sink's dead-letter producer.
 */
public record KafkaClientSettings(String bootstrapServers, Map<String, String> streams, Map<String, String> consumer,
                                  Map<String, String> producer, Map<String, String> admin) {
    public static final String PREFIX = "kafka.";
    public static final List<String> CLIENTS = List.of("streams", "consumer", "producer");
    private static final String CONFIG_PROVIDERS = org.apache.kafka.common.config.AbstractConfig.CONFIG_PROVIDERS_CONFIG;

    public KafkaClientSettings {
        // Printed in logs and messages as part of IngestSettings: never with a password of Kafka's.
        streams = KafkaSecrets.hiddenInPrint(streams);
        consumer = KafkaSecrets.hiddenInPrint(consumer);
        producer = KafkaSecrets.hiddenInPrint(producer);
        admin = KafkaSecrets.hiddenInPrint(admin);
    }

    public static KafkaClientSettings from(Config c, String bootstrapServers) {
        Map<String, String> shared = c.shared(PREFIX, CLIENTS);
        return new KafkaClientSettings(bootstrapServers, withoutBootstrap(c.layered(PREFIX, "streams", CLIENTS)),
                withoutBootstrap(c.layered(PREFIX, "consumer", CLIENTS)),
                // Shared keys that are not producer settings (a consumer's group or fetch sizes) would only earn warnings.
                withoutBootstrap(only(shared, ProducerConfig.configNames(), c.withPrefix(PREFIX + "producer."))),
                withoutBootstrap(only(shared, AdminClientConfig.configNames(), Map.of())));
    }

    /** The sink's and replay's consumer. */
    public Map<String, Object> consumerConfig() {
        return withBootstrap(consumer);
    }

    /** The sink's dead-letter producer. */
    public Map<String, Object> producerConfig() {
        return withBootstrap(producer);
    }

    /**
     * The admin client that provisions topics: the shared keys that are admin settings (security, timeouts). Its calls
     * may take up to {@code timeout}, and one request no longer, unless kafka.default.api.timeout.ms and
     * kafka.request.timeout.ms say otherwise (the admin client refuses a call timeout below the request timeout).
     */
    public Map<String, Object> adminConfig(Duration timeout) {
        Map<String, Object> m = withBootstrap(admin);
        int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        m.putIfAbsent(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
        m.putIfAbsent(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(ms, 30_000)); // 30 s: the client's default
        return m;
    }

    private Map<String, Object> withBootstrap(Map<String, String> settings) {
        Map<String, Object> m = new HashMap<>(settings);
        m.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        return m;
    }

    private static Map<String, String> only(Map<String, String> shared, Set<String> names, Map<String, String> own) {
        Map<String, String> m = new HashMap<>();
        // config.providers.NAME.* are not in a client's ConfigDef, yet without them a ${NAME:...} reference (a secret
        // read from a file) reaches the client unresolved.
        shared.forEach((k, v) -> { if (names.contains(k) || k.startsWith(CONFIG_PROVIDERS)) m.put(k, v); });
        m.putAll(own);
        return m;
    }

    /** kafka.bootstrap.servers is a declared setting of its own; the layers must not carry a second copy. */
    private static Map<String, String> withoutBootstrap(Map<String, String> m) {
        Map<String, String> out = new java.util.TreeMap<>(m);
        out.remove(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        return Map.copyOf(out);
    }
}
