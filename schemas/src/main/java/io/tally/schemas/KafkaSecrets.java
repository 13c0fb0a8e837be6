package io.tally.schemas;

import java.util.AbstractMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Which Kafka client settings hold a secret: those Kafka itself types as passwords ({@code sasl.jaas.config},
 * {@code ssl.truststore.password}, {@code ssl.key.password}, ...), also under a client's prefix
 * ({@code producer.ssl.key.password}). The apps' pass-through maps print through {@link #hiddenInPrint}, so a record
 * of settings in a log line or an exception message shows {@code ****} for those values.
 */
public final class KafkaSecrets {
    public static final String HIDDEN = "****";
    private static final Set<String> PASSWORD_KEYS = Stream.of(ProducerConfig.configDef(), ConsumerConfig.configDef(), AdminClientConfig.configDef())
            .flatMap(def -> def.configKeys().values().stream())
            .filter(k -> k.type == ConfigDef.Type.PASSWORD).map(k -> k.name).collect(Collectors.toUnmodifiableSet());

    private KafkaSecrets() {}

    public static boolean isSecret(String key) {
        return PASSWORD_KEYS.stream().anyMatch(p -> key.equals(p) || key.endsWith("." + p));
    }

    /** The same settings, read-only and sorted, whose {@code toString} hides the values of secret keys. */
    public static Map<String, String> hiddenInPrint(Map<String, String> settings) {
        return new Hidden(new TreeMap<>(settings));
    }

    private static final class Hidden extends AbstractMap<String, String> {
        private final Map<String, String> settings;

        Hidden(Map<String, String> settings) {
            this.settings = java.util.Collections.unmodifiableMap(settings);
        }

        @Override
        public Set<Entry<String, String>> entrySet() {
            return settings.entrySet();
        }

        @Override
        public String toString() {
            return settings.entrySet().stream().map(e -> e.getKey() + "=" + (isSecret(e.getKey()) ? HIDDEN : e.getValue()))
                    .collect(Collectors.joining(", ", "{", "}"));
        }
    }
}
