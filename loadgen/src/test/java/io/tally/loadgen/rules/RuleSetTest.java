package io.tally.loadgen.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RuleSetTest {
    @Test
    void readsTheDefaultRulesFileFromAModuleDirectory() {
        // Maven runs tests in loadgen/: the default relative path is found in the parent.
        RuleSet rules = RuleSet.load(Path.of("rules/default-rules.yaml"));
        assertThat(rules.rules()).extracting(Rule::name).contains("spend-per-customer", "spend-per-customer-sku");
        Rule sku = rules.rules().stream().filter(r -> r.name().equals("spend-per-customer-sku")).findFirst().orElseThrow();
        assertThat(sku.qualifier()).hasValue("sku");
        assertThat(sku.aggregations()).containsExactlyInAnyOrder(Rule.Aggregation.SUM, Rule.Aggregation.COUNT);
        assertThat(rules.lateBound()).isEqualTo(Duration.ofDays(35));
    }

    @Test
    void reportsEveryProblemAtOnce() {
        String yaml = """
                rules:
                  - name: Bad_Name
                    entity: nosuchfield
                    value: amount
                    aggregations: [sum, median]
                    units: [hour, week]
                    retention: 35 days
                    colour: red
                """;
        assertThatThrownBy(() -> RuleSet.parse(yaml, "f.yaml"))
                .hasMessageContaining("name must match")
                .hasMessageContaining("entity 'nosuchfield' is not an event field")
                .hasMessageContaining("'median' is not one of")
                .hasMessageContaining("'week' is not one of")
                .hasMessageContaining("retention '35 days'")
                .hasMessageContaining("unknown key 'colour'");
    }

    @Test
    void monthIndexesCountCalendarMonths() {
        assertThat(TimeUnit.MONTH.index(Instant.parse("1970-01-31T23:59:59Z"))).isZero();
        assertThat(TimeUnit.MONTH.index(Instant.parse("1970-02-01T00:00:00Z"))).isEqualTo(1);
        assertThat(TimeUnit.MONTH.index(Instant.parse("2026-11-21T12:00:00Z"))).isEqualTo(56 * 12 + 10);
        assertThat(TimeUnit.HOUR.index(Instant.parse("1969-12-31T23:59:59Z"))).isEqualTo(-1); // floor, not truncation
    }
}
