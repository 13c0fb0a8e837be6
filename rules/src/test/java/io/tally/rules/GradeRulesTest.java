package io.tally.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.TimeUnit;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class GradeRulesTest {
    @Test
    void theDefaultRulesLoad() {
        GradeRules rules = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
        assertThat(rules.rules()).extracting(GradeRule::name)
                .containsExactly("spend-per-customer", "spend-per-customer-sku", "orders-per-email", "spend-per-postal-code");
        GradeRule sku = rules.rules().get(1);
        assertThat(sku.qualifierField()).hasValue("sku");
        assertThat(sku.units()).containsExactly(TimeUnit.DAY);
        assertThat(sku.gradeId("sku-9")).isEqualTo("spend-per-customer-sku:sku-9");
        assertThat(rules.longestRetention()).isEqualTo(Duration.ofDays(35));
        assertThat(rules.rule("spend-per-customer-sku")).containsSame(sku);
        assertThat(rules.rule("spend-per-customer")).hasValueSatisfying(r -> assertThat(r.qualified()).isFalse());
        assertThat(rules.rule("spend")).isEmpty();
        assertThat(rules.units()).containsExactly(TimeUnit.HOUR, TimeUnit.DAY);
    }

    @Test
    void theBuiltInDefaultIsTheRepositorysRulesFile() throws Exception {
        // The jar's copy is built from rules/default-rules.yaml; the tests run in the module directory.
        GradeRules file = GradeRules.load("default-rules.yaml");
        assertThat(GradeRules.load(GradeRules.BUILTIN_DEFAULT).rules()).isEqualTo(file.rules());
        assertThatThrownBy(() -> GradeRules.load("builtin:other.yaml")).hasMessageContaining("no built-in rule set named other.yaml");
    }

    @Test
    void namesAreShortLowerCaseWordsThatCannotBreakADocumentId() {
        String rule = "  - {name: %s, entity: email, value: one, aggregations: [count], units: [day], retention: P1D}\n";
        for (String good : new String[] {"a", "0-day", "spend-per-customer", "a".repeat(64)}) {
            assertThat(GradeRules.parse("rules:\n" + rule.formatted(good), "f").rules()).extracting(GradeRule::name).containsExactly(good);
        }
        for (String bad : new String[] {"-a", "a:b", "a|b", "A", "a_b", "a".repeat(65)}) {
            assertThatThrownBy(() -> GradeRules.parse("rules:\n" + rule.formatted("'" + bad + "'"), "f"))
                    .as(bad).hasMessageContaining("name must match [a-z0-9][a-z0-9-]{0,63}");
        }
    }

    @Test
    void jsonIsAcceptedToo() {
        GradeRules rules = GradeRules.parse("""
                {"rules": [{"name": "n", "entity": "email", "value": "one", "aggregations": ["count"],
                            "units": ["minute"], "retention": "PT2H"}]}""", "json");
        assertThat(rules.rules().get(0).retention()).isEqualTo(Duration.ofHours(2));
    }

    @Test
    void everyProblemIsReportedWithItsRuleAndField() {
        assertThatThrownBy(() -> GradeRules.parse("""
                rules:
                  - name: Bad Name
                    entity: 'customer..id'
                    value: amount
                    aggregations: [sum, median]
                    units: [hour, week]
                    retention: 35 days
                  - name: counts
                    entity: amount
                    qualifier: sku
                    filter: {field: status}
                    value: one
                    aggregations: [max]
                    units: [day]
                    retention: P1D
                    colour: blue
                  - name: counts
                    entity: email
                    value: one
                    aggregations: [count]
                    units: [day]
                    retention: P1D
                """, "rules.yaml"))
                .isInstanceOfSatisfying(RulesException.class, e -> assertThat(e.problems()).satisfies(p -> {
                    assertThat(p).anyMatch(s -> s.startsWith("rules.yaml rule #1 (Bad Name): name must match"));
                    // Only the path's syntax: whether it exists with a key-like type depends on each source's schema (SourcePlan).
                    assertThat(p).anyMatch(s -> s.contains("entity: 'customer..id' is not a field path: an empty segment at position 10"));
                    assertThat(p).anyMatch(s -> s.contains("aggregation 'median'"));
                    assertThat(p).anyMatch(s -> s.contains("unknown time unit 'week'"));
                    assertThat(p).anyMatch(s -> s.contains("retention '35 days' is not an ISO-8601 duration"));
                    assertThat(p).anyMatch(s -> s.contains("filter needs 'field' and a non-empty list 'in'"));
                    assertThat(p).anyMatch(s -> s.contains("min and max of 'one'"));
                    assertThat(p).anyMatch(s -> s.contains("unknown field 'colour'"));
                }));
    }

    @Test
    void duplicateNamesAndEmptyFilesAreRejected() {
        String rule = "  - {name: a, entity: email, value: one, aggregations: [count], units: [day], retention: P1D}\n";
        assertThatThrownBy(() -> GradeRules.parse("rules:\n" + rule + rule, "f"))
                .isInstanceOfSatisfying(RulesException.class, e -> assertThat(e.problems()).containsExactly("f rule #2 (a): duplicate name 'a'"));
        assertThatThrownBy(() -> GradeRules.parse("rules: []", "f")).hasMessageContaining("non-empty list under 'rules'");
        assertThatThrownBy(() -> GradeRules.load("/no/such/rules.yaml")).hasMessageContaining("cannot read rules file /no/such/rules.yaml");
    }

    @Test
    void rulesKeepTheirListsImmutable() {
        GradeRule r = GradeRules.load(GradeRules.BUILTIN_DEFAULT).rules().get(0);
        assertThatThrownBy(() -> r.units().add(TimeUnit.MONTH)).isInstanceOf(UnsupportedOperationException.class);
        assertThat(List.copyOf(r.aggregations())).hasSize(4);
    }
}
