package io.tally.ingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SinkSettingsTest {

    @Test
    void everySettingIsDocumentedDefaultedAndPrefixed() {
        assertThat(SinkSettings.ALL).allSatisfy(s -> {
            assertThat(s.key()).startsWith("sink.");
            assertThat(s.doc()).isNotBlank();
            assertThat(s.defaultValue()).isPresent();
        });
        SinkSettings d = SinkSettings.defaults();
        assertThat(d.groupId()).isEqualTo("tally-sink");
    }

    @Test
    void crossFieldProblemsAreListedTogether() {
        assertThatThrownBy(() -> SinkSettings.from(Config.load(SinkSettings.ALL, List.of(), new String[] {
                "--sink.max-in-flight-documents=10", "--sink.window.max-records=100",
                "--sink.revoke-drain-timeout.ms=100", "--sink.flush-window.ms=200",
                "--sink.concurrency.initial=50"}, Map.of())))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).hasSize(3));
    }
}
