package io.tally.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigTest {
    static final Setting<String> HOST = Setting.string("http.host", "127.0.0.1", "Address to bind.");
    static final Setting<Integer> PORT = Setting.integer("http.port", 8080, "Port to bind.").atLeast(0);
    static final Setting<Duration> FLUSH = Setting.millis("flush.interval.ms", 100, "Flush window.");
    static final List<Setting<?>> ALL = List.of(HOST, PORT, FLUSH);

    @Test
    void defaultsApplyWhenNothingIsSet() {
        Config c = Config.load(ALL, List.of(), new String[0], Map.of());
        assertThat(c.get(PORT)).isEqualTo(8080);
        assertThat(c.get(FLUSH)).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void fileBeatsDefaultEnvBeatsFileFlagBeatsEnv(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("app.properties");
        Files.writeString(file, "http.port=1000\nhttp.host=file-host\nflush.interval.ms=7\n");

        Config fileOnly = Config.load(ALL, List.of(), new String[] {"--config", file.toString()}, Map.of());
        assertThat(fileOnly.get(PORT)).isEqualTo(1000);

        Map<String, String> env = Map.of("TALLY_CONFIG", file.toString(), "TALLY_HTTP_PORT", "2000",
                "TALLY_HTTP_HOST", "env-host");
        Config withEnv = Config.load(ALL, List.of(), new String[0], env);
        assertThat(withEnv.get(PORT)).isEqualTo(2000);
        assertThat(withEnv.get(FLUSH)).isEqualTo(Duration.ofMillis(7));

        Config withFlag = Config.load(ALL, List.of(), new String[] {"--http.port=3000"}, env);
        assertThat(withFlag.get(PORT)).isEqualTo(3000);
        assertThat(withFlag.get(HOST)).isEqualTo("env-host");
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        Setting<String> key = Setting.string("cosmos.key", null, "Master key.").required().secret();
        assertThatThrownBy(() -> Config.load(List.of(PORT, FLUSH, key), List.of(),
                new String[] {"--http.port=abc", "--flush.interval.ms=-5", "--htp.port=1"}, Map.of()))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).hasSize(4)
                        .anySatisfy(p -> assertThat(p).startsWith("http.port (from flag --http.port): cannot parse 'abc'"))
                        .anySatisfy(p -> assertThat(p).contains("flush.interval.ms").contains("must be >= 0"))
                        .anySatisfy(p -> assertThat(p).contains("htp.port").contains("unknown setting"))
                        .anySatisfy(p -> assertThat(p).contains("cosmos.key: required").contains("TALLY_COSMOS_KEY")));
    }

    @Test
    void secretsAreNeverEchoed() {
        Setting<Integer> pin = Setting.integer("api.pin", 1, "A secret number.").secret();
        assertThatThrownBy(() -> Config.load(List.of(pin), List.of(), new String[] {"--api.pin=hunter2"}, Map.of()))
                .hasMessageContaining("****").hasMessageNotContaining("hunter2");
    }

    @Test
    void passThroughKeysReachClientsWithoutThePrefix() {
        Config c = Config.load(ALL, List.of("kafka."), new String[] {"--kafka.linger.ms=5", "--kafka.acks=all"}, Map.of());
        assertThat(c.withPrefix("kafka.")).containsExactlyEntriesOf(new java.util.TreeMap<>(Map.of("acks", "all", "linger.ms", "5")));
    }

    @Test
    void aClientsOwnPrefixWinsOverTheSharedOneAndStaysItsOwn(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("app.properties");
        Files.writeString(file, "kafka.linger.ms=5\nkafka.producer.linger.ms=50\nkafka.consumer.max.poll.records=10\n");
        List<String> clients = List.of("streams", "consumer", "producer");
        Config c = Config.load(ALL, List.of("kafka."), new String[] {"--config", file.toString(), "--kafka.acks=all",
                "--kafka.streams.producer.linger.ms=20", "--kafka.consumer.max.poll.records=500"}, Map.of());

        assertThat(c.layered("kafka.", "producer", clients)).as("producer: its own linger.ms beats the shared one")
                .containsExactlyEntriesOf(new java.util.TreeMap<>(Map.of("acks", "all", "linger.ms", "50")));
        assertThat(c.layered("kafka.", "consumer", clients)).as("consumer: the flag beats the file, shared keys apply")
                .containsExactlyEntriesOf(new java.util.TreeMap<>(Map.of("acks", "all", "linger.ms", "5", "max.poll.records", "500")));
        assertThat(c.layered("kafka.", "streams", clients)).as("streams: its own keys keep Kafka Streams' inner prefixes")
                .containsExactlyEntriesOf(new java.util.TreeMap<>(Map.of("acks", "all", "linger.ms", "5", "producer.linger.ms", "20")));
    }

    @Test
    void environmentNamesDeriveFromKeys() {
        assertThat(Setting.string("kafka.bootstrap.servers", "x", "d").envName()).isEqualTo("TALLY_KAFKA_BOOTSTRAP_SERVERS");
        assertThat(Setting.string("read.api-keys.file", "x", "d").envName()).isEqualTo("TALLY_READ_API_KEYS_FILE");
    }
}
