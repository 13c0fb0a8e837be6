package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus alert rules under deploy/monitoring are valid for Prometheus's own checker, pass their unit tests
 * (promtool test rules), and each one is tested firing and points a person at its runbook section.
 */
class AlertRulesTest {

    @Test
    void promtoolAcceptsTheRulesAndTheComposeConfig() {
        Path promtool = OpsTools.promtool();
        for (Path rules : OpsFiles.rules()) {
            OpsTools.Run r = OpsTools.run(rules.getParent(), promtool.toString(), "check", "rules", rules.toString()).expectSuccess();
            assertThat(r.output()).as("promtool check rules %s", rules).contains("SUCCESS");
        }
        Path config = OpsFiles.monitoring().resolve("prometheus/prometheus.yml");
        OpsTools.run(config.getParent(), promtool.toString(), "check", "config", "--syntax-only", config.toString()).expectSuccess();
    }

    @Test
    void theRulesPassTheirUnitTests() {
        Path promtool = OpsTools.promtool();
        for (Path tests : OpsFiles.ruleTests()) {
            OpsTools.Run r = OpsTools.run(tests.getParent(), promtool.toString(), "test", "rules", tests.toString()).expectSuccess();
            assertThat(r.output()).as("promtool test rules %s", tests).contains("SUCCESS");
        }
    }

    @Test
    void everyAlertIsTestedFiringAndHasASeveritySummaryAndRunbookSection() throws IOException {
        String runbook = Files.readString(OpsFiles.root().resolve("docs/runbook.md"));
        Set<String> testedFiring = testedFiring();
        List<String> alerts = new ArrayList<>();
        for (Path file : OpsFiles.rules()) {
            for (JsonNode rule : ReferencedMetrics.rules(file)) {
                if (!rule.has("alert")) continue;
                String name = rule.get("alert").asText();
                alerts.add(name);
                assertThat(rule.path("labels").path("severity").asText()).as("%s: severity", name).isIn("critical", "warning");
                assertThat(rule.path("annotations").path("summary").asText()).as("%s: summary", name).isNotBlank();
                String url = rule.path("annotations").path("runbook_url").asText();
                assertThat(url).as("%s: runbook_url", name).isEqualTo("docs/runbook.md#" + name.toLowerCase(Locale.ROOT));
                assertThat(runbook).as("docs/runbook.md has a section for %s", name).contains("\n## " + name + "\n");
                assertThat(testedFiring).as("a promtool unit test expects %s to fire", name).contains(name);
            }
        }
        assertThat(alerts).as("alerts").isNotEmpty().doesNotHaveDuplicates();
    }

    /** Alert names that some unit test expects to fire (a non-empty exp_alerts). */
    private static Set<String> testedFiring() throws IOException {
        Set<String> names = new TreeSet<>();
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        for (Path tests : OpsFiles.ruleTests()) {
            for (JsonNode test : yaml.readTree(tests.toFile()).path("tests")) {
                for (JsonNode check : test.path("alert_rule_test")) {
                    if (!check.path("exp_alerts").isEmpty()) names.add(check.path("alertname").asText());
                }
            }
        }
        return names;
    }
}
