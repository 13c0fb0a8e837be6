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
}
