package io.tally.tests.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.config.Config;
import io.tally.config.Setting;
import io.tally.ingest.app.IngestSettings;
import io.tally.loadgen.LoadgenSettings;
import io.tally.read.ReadSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every setting of every application is documented with its key, environment name and default in
 * README.md, which carries the tables this class prints ({@code main}) so they cannot drift.
 */
class SettingsDocsTest {
    static Map<String, List<Setting<?>>> apps() {
        Map<String, List<Setting<?>>> apps = new LinkedHashMap<>();
        apps.put("ingest-app", IngestSettings.all());
        apps.put("read-service", ReadSettings.all());
        apps.put("loadgen", LoadgenSettings.ALL);
        return apps;
    }

    @Test
    void readmeCarriesTheGeneratedSettingsTables() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        apps().forEach((app, settings) -> assertThat(readme)
                .as("README.md table for %s (regenerate with SettingsDocsTest.main)", app)
                .contains(Config.markdownTable(settings)));
    }

    @Test
    void everySettingHasADescription() {
        apps().values().stream().flatMap(List::stream)
                .forEach(s -> assertThat(s.doc()).as(s.key()).hasSizeGreaterThan(10));
    }

    public static void main(String[] args) {
        apps().forEach((app, settings) -> System.out.println("#### " + app + "\n\n" + Config.markdownTable(settings)));
    }
}
