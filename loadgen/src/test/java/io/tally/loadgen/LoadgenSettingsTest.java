package io.tally.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.config.ConfigException;
import io.tally.config.Setting;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LoadgenSettingsTest {
    static final Instant NOW = Instant.parse("2026-11-21T12:34:56Z");

    @Test
    void everySettingIsDocumentedWithADefault() {
        for (Setting<?> s : LoadgenSettings.ALL) {
            assertThat(s.doc()).as(s.key()).isNotBlank();
            assertThat(s.defaultValue()).as(s.key()).isPresent();
        }
        String help = LoadgenMain.help();
        LoadgenSettings.ALL.forEach(s -> assertThat(help).contains("--" + s.key() + " ("));
    }

    @Test
    void defaultsWorkAndKafkaKeysPassThrough() {
        LoadgenSettings s = LoadgenSettings.load(new String[] {"--kafka.linger.ms=50"}, Map.of(), NOW);
        assertThat(s.mode()).isEqualTo(LoadgenSettings.Mode.GENERATE);
        assertThat(s.start()).isEqualTo(Instant.parse("2026-11-19T12:00:00Z"));
        assertThat(s.kafkaOverrides()).containsEntry("linger.ms", "50").doesNotContainKey("bootstrap.servers");
        assertThat(s.recordFile()).isEmpty();
        assertThat(s.groundTruthFile()).isPresent();
        assertThat(s.plannedRecords()).isEqualTo(10);
    }

    @Test
    void crossFieldProblemsAreReportedTogether() {
        assertThatThrownBy(() -> LoadgenSettings.load(new String[] {"--loadgen.duration.ms=1000", "--loadgen.burst.factor=5",
                "--loadgen.mode=replay", "--loadgen.late.fraction=0.7", "--loadgen.future.fraction=0.7",
                "--loadgen.start=yesterday"}, Map.of(), NOW))
                .isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).problems()).hasSize(5));
        assertThatThrownBy(() -> LoadgenSettings.load(new String[] {"--loadgen.duplicate.fraction=1.5"}, Map.of(), NOW))
                .hasMessageContaining("loadgen.duplicate.fraction");
    }

    @Test
    void ordersNeedTheirOwnTopic() {
        LoadgenSettings off = LoadgenSettings.load(new String[0], Map.of(), NOW);
        assertThat(off.ordersTopic()).isEmpty();
        assertThat(off.ordersShare()).isZero();
        LoadgenSettings on = LoadgenSettings.load(new String[] {"--loadgen.orders.topic=orders", "--loadgen.orders.share=0.5"},
                Map.of(), NOW);
        assertThat(on.topicOf(Destination.ORDERS)).isEqualTo("orders");
        assertThat(on.topicOf(Destination.TRANSACTIONS)).isEqualTo("transactions");
        assertThatThrownBy(() -> LoadgenSettings.load(new String[] {"--loadgen.orders.share=0.5"}, Map.of(), NOW))
                .hasMessageContaining("loadgen.orders.share > 0 needs loadgen.orders.topic");
        assertThatThrownBy(() -> LoadgenSettings.load(new String[] {"--loadgen.orders.topic=transactions"}, Map.of(), NOW))
                .hasMessageContaining("loadgen.orders.topic must differ from loadgen.topic");
        assertThatThrownBy(() -> LoadgenSettings.load(new String[] {"--loadgen.orders.share=2"}, Map.of(), NOW))
                .hasMessageContaining("loadgen.orders.share");
    }

    @Test
    void progressLineShowsRateAndEta() {
        String line = ProgressReporter.line(600, 500, 0, 1234.4, 1000, 5_000_000_000L);
        assertThat(line).isEqualTo("sent 600  acked 500/1,000 (50%)  1,234 rec/s  ETA 5s");
        assertThat(ProgressReporter.line(10, 9, 1, 0, -1, 1)).contains("FAILED 1").doesNotContain("ETA");
    }
}
