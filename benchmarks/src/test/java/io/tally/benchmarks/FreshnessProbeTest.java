package io.tally.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
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

    /** The hops before read-service read the entity bucket's JSON, whose grades are arrays since the array form. */
    @Test
    void readsAGradesCountFromItsArrayAndFromTheObjectFormBeforeIt() throws Exception {
        ObjectMapper json = new ObjectMapper();
        assertThat(FreshnessProbe.count(json.readTree("[3, \"120.5000\", \"10.5000\", \"80.0000\"]"))).isEqualTo(3);
        assertThat(FreshnessProbe.count(json.readTree("[2]"))).isEqualTo(2);
        assertThat(FreshnessProbe.count(json.readTree("{\"sum\": \"1.0000\", \"count\": 5}"))).isEqualTo(5);
        assertThat(FreshnessProbe.count(json.missingNode())).isZero();
    }
}
