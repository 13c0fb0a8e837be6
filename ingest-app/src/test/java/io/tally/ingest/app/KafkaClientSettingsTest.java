package io.tally.ingest.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/** Each Kafka client of ingest-app gets the shared kafka.* settings with its own prefix layered over them. */
class KafkaClientSettingsTest {
    static final String[] FLAGS = {"--kafka.bootstrap.servers=broker:9092", "--kafka.security.protocol=SSL",
        "--kafka.session.timeout.ms=15000", "--kafka.linger.ms=5",
        "--kafka.streams.producer.linger.ms=20", "--kafka.streams.session.timeout.ms=30000",
        "--kafka.consumer.max.poll.records=100", "--kafka.consumer.session.timeout.ms=10000",
        "--kafka.producer.linger.ms=50", "--kafka.producer.compression.type=zstd"};

    final IngestSettings settings = IngestSettings.load(FLAGS, Map.of());
    final KafkaClientSettings kafka = settings.kafka();

    @Test
    void kafkaStreamsGetsTheSharedKeysAndItsOwnWhichWinAndKeepStreamsInnerPrefixes() {
        assertThat(new IngestApp(settings).streamsProperties())
                .containsEntry("security.protocol", "SSL").containsEntry("linger.ms", "5")
                .containsEntry("session.timeout.ms", "30000")
                .containsEntry(StreamsConfig.producerPrefix("linger.ms"), "20")
                .containsEntry(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "broker:9092")
                .doesNotContainKey("max.poll.records").doesNotContainKey("compression.type")
                .doesNotContainKey("consumer.max.poll.records").doesNotContainKey("streams.producer.linger.ms");
    }

    @Test
    void theConsumerOfTheSinkAndReplayGetsTheSharedKeysAndItsOwn() {
        assertThat(kafka.consumerConfig()).containsOnly(Map.entry("bootstrap.servers", "broker:9092"),
                Map.entry("security.protocol", "SSL"), Map.entry("linger.ms", "5"),
                Map.entry("session.timeout.ms", "10000"), Map.entry("max.poll.records", "100"));
    }

    @Test
    void theDeadLetterProducerGetsTheSharedProducerSettingsAndItsOwn() {
        assertThat(kafka.producerConfig()).containsOnly(Map.entry("bootstrap.servers", "broker:9092"),
                Map.entry("security.protocol", "SSL"), Map.entry("linger.ms", "50"), Map.entry("compression.type", "zstd"));
    }

    @Test
    void theAdminClientGetsTheSharedAdminSettingsAndWaitsAsLongAsProvisioningDoes() {
        assertThat(kafka.adminConfig(Duration.ofSeconds(90))).containsOnly(Map.entry("bootstrap.servers", "broker:9092"),
                Map.entry("security.protocol", "SSL"), Map.entry("default.api.timeout.ms", 90_000),
                Map.entry("request.timeout.ms", 30_000));
    }

    /**
     * A secret Kafka reads from a file itself (the Helm chart's Secret): the provider settings reach every client with
     * the reference, which only the client resolves, also the producer and the admin client, which keep only the keys
     * their ConfigDef knows.
     */
    @Test
    void kafkasConfigProvidersReachEveryClient() {
        String provider = "org.apache.kafka.common.config.provider.DirectoryConfigProvider";
        IngestSettings s = IngestSettings.load(new String[] {"--kafka.bootstrap.servers=broker:9092", "--kafka.config.providers=files",
            "--kafka.config.providers.files.class=" + provider, "--kafka.sasl.jaas.config=${files:/etc/tally/kafka:jaas}"}, Map.of());
        for (Map<?, ?> client : java.util.List.<Map<?, ?>>of(s.kafka().consumerConfig(), s.kafka().producerConfig(),
                s.kafka().adminConfig(Duration.ofSeconds(30)), new IngestApp(s).streamsProperties())) {
            assertThat(client.get("config.providers")).isEqualTo("files");
            assertThat(client.get("config.providers.files.class")).isEqualTo(provider);
            assertThat(client.get("sasl.jaas.config")).isEqualTo("${files:/etc/tally/kafka:jaas}");
        }
    }

    /** Settings are printed at start and in errors: Kafka's password-type values never with them. */
    @Test
    void passwordsArePrintedHidden() {
        IngestSettings s = IngestSettings.load(new String[] {"--kafka.sasl.jaas.config=x required password=\"pw-1\";",
            "--kafka.ssl.truststore.password=pw-2", "--kafka.producer.ssl.key.password=pw-3", "--kafka.linger.ms=5"}, Map.of());
        assertThat(s.toString()).doesNotContain("pw-1").doesNotContain("pw-2").doesNotContain("pw-3")
                .contains("sasl.jaas.config=****").contains("ssl.key.password=****").contains("linger.ms=5");
        assertThat(s.kafka().producerConfig()).containsEntry("ssl.key.password", "pw-3");
    }
}
