package io.tally.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.config.ConfigException;
import io.tally.rules.GradeRules;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReadSettingsTest {
    @Test
    void defaultsWork() {
        ReadSettings s = ReadSettings.load(new String[0], Map.of());
        assertThat(s.auth().enabled()).isFalse();
        assertThat(s.api().requestTimeout()).isGreaterThan(s.reads().endToEndTimeout());
        assertThat(s.cosmos().preferredRegions()).isEmpty();
    }

    @Test
    void keysComeFromTheEnvironment() {
        ReadSettings s = ReadSettings.load(new String[] {"--read.auth.enabled=true"}, Map.of("TALLY_READ_AUTH_API_KEYS", "a, b"));
        assertThat(s.auth().keys()).containsExactly("a", "b");
    }

    @Test
    void crossFieldProblemsAreListedTogether() {
        assertThatThrownBy(() -> ReadSettings.load(new String[] {"--read.auth.enabled=true", "--read.request-timeout.ms=100",
                "--read.cosmos.end-to-end-timeout.ms=200"}, Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("no key is configured").hasMessageContaining("must not exceed");
        assertThatThrownBy(() -> ReadSettings.load(new String[] {"--read.auth.api-keys-file=/nonexistent/keys"}, Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("cannot read");
    }

    @Test
    void regionsAreParsed() {
        ReadSettings s = ReadSettings.load(new String[] {"--cosmos.preferred-regions=West Europe, North Europe"}, Map.of());
        assertThat(s.cosmos().preferredRegions()).containsExactly("West Europe", "North Europe");
    }

    @Test
    void theDefaultRulesAreTheOnesShippedInTheJar() {
        ReadSettings s = ReadSettings.load(new String[0], Map.of());
        GradeRules g = GradeRules.load(s.rulesLocation());
        assertThat(g.rule("spend-per-customer")).hasValueSatisfying(x -> assertThat(x.qualified()).isFalse());
        assertThat(g.rule("spend-per-customer-sku")).hasValueSatisfying(x -> assertThat(x.qualified()).isTrue());
        assertThat(g.rule("orders-per-email")).isPresent();
    }
}
