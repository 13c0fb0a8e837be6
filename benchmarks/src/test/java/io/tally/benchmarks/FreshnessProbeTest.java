package io.tally.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.rules.GradeRules;
import org.junit.jupiter.api.Test;

class FreshnessProbeTest {
    private static GradeRules rules(String yaml) {
        return GradeRules.parse(yaml, "test");
    }

    @Test
    void countsByTheDefaultRulesSpendPerCustomer() {
        assertThat(FreshnessProbe.grade(GradeRules.load(GradeRules.BUILTIN_DEFAULT))).isEqualTo("spend-per-customer");
    }

    @Test
    void findsAnotherCustomerHourGradeThatCountsAnApprovedWebOrder() {
        GradeRules r = rules("""
                rules:
                  - {name: declined-per-customer, entity: customerId, filter: {field: status, in: [DECLINED]}, value: one,
                     aggregations: [count], units: [hour], retention: P7D}
                  - {name: spend-per-customer-sku, entity: customerId, qualifier: sku, value: amount, aggregations: [sum],
                     units: [hour], retention: P7D}
                  - {name: web-per-customer, entity: customerId, filter: {field: channel, in: [WEB]}, value: one,
                     aggregations: [count], units: [hour, day], retention: P7D}
                """);
        assertThat(FreshnessProbe.grade(r)).isEqualTo("web-per-customer");
    }

    @Test
    void rulesWithoutSuchAGradeAreRefusedSayingWhatIsNeeded() {
        GradeRules r = rules("""
                rules:
                  - {name: orders-per-email, entity: email, value: one, aggregations: [count], units: [hour], retention: P7D}
                """);
        assertThatThrownBy(() -> FreshnessProbe.grade(r)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("customerId").hasMessageContaining("per hour");
    }
}
