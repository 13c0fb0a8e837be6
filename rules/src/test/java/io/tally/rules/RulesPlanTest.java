package io.tally.rules;

import static io.tally.rules.RuleVersionsTest.SPEND;
import static io.tally.rules.RuleVersionsTest.versions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.TimeUnit;
import io.tally.rules.RulesPlan.Kind;
import io.tally.rules.RulesPlan.Step;
import io.tally.rules.source.Sources;
import java.util.List;
import org.junit.jupiter.api.Test;

public class RulesPlanTest {
    public static final String ORDERS = """
              - name: orders
                entity: email
                value: one
                aggregations: [count]
                units: [hour]
                retention: P7D
            """;

    static RulesPlan plan(String counted, String proposed) {
        return RulesPlan.between(versions(counted), versions(proposed));
    }

    @Test
    void theSameFileHasNothingToDo() {
        GradeRules rules = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
        Sources sources = Sources.load(Sources.BUILTIN_DEFAULT);
        RulesPlan p = RulesPlan.between(RuleVersions.of(rules, sources), RuleVersions.of(rules, sources));
        assertThat(p.changes()).isFalse();
        assertThat(p.unchanged()).hasSize(5);
        assertThat(p.render()).isEqualTo("nothing to do: 5 grades unchanged\n");
    }

    @Test
    void aFilterChangedUnderTheSameNameChangesEveryUnitOfTheRule() {
        RulesPlan p = plan(SPEND + ORDERS, SPEND.replace("in: [APPROVED, DECLINED]", "in: [APPROVED]") + ORDERS);
        assertThat(p.changes()).isTrue();
        assertThat(p.changed()).extracting(Step::grade).containsExactly("spend/hour", "spend/day");
        assertThat(p.changed()).allSatisfy(s -> assertThat(s.oldVersion()).isNotEqualTo(s.newVersion()));
        assertThat(p.unchanged()).extracting(Step::grade).containsExactly("orders/hour");
        assertThat(p.added()).isEmpty();
        assertThat(p.removed()).isEmpty();
    }

    @Test
    void aUnitAddedIsOnlyThatGradeAdded() {
        RulesPlan p = plan(SPEND, SPEND.replace("units: [hour, day]", "units: [hour, day, month]"));
        assertThat(p.added()).extracting(Step::grade).containsExactly("spend/month");
        assertThat(p.added().get(0).oldVersion()).isNull();
        assertThat(p.unchanged()).extracting(Step::grade).containsExactly("spend/hour", "spend/day");
        assertThat(p.changed()).isEmpty();
        assertThat(p.removed()).isEmpty();
    }

    @Test
    void aUnitDroppedIsOnlyThatGradeRemoved() {
        RulesPlan p = plan(SPEND, SPEND.replace("units: [hour, day]", "units: [day]"));
        assertThat(p.removed()).extracting(Step::grade).containsExactly("spend/hour");
        assertThat(p.unchanged()).extracting(Step::grade).containsExactly("spend/day");
    }

    @Test
    void aRetentionChangedIsChanged() {
        RulesPlan p = plan(SPEND, SPEND.replace("retention: P35D", "retention: P90D"));
        assertThat(p.changed()).extracting(Step::grade).containsExactly("spend/hour", "spend/day");
        assertThat(p.steps()).extracting(Step::kind).containsOnly(Kind.CHANGED);
    }

    @Test
    void aRenameIsARemovalAndAnAddition() {
        RulesPlan p = plan(SPEND + ORDERS, SPEND + ORDERS.replace("name: orders", "name: orders-per-email"));
        assertThat(p.removed()).extracting(Step::grade).containsExactly("orders/hour");
        assertThat(p.added()).extracting(Step::grade).containsExactly("orders-per-email/hour");
        assertThat(p.added().get(0).newVersion()).isEqualTo(p.removed().get(0).oldVersion());
        assertThat(p.render()).contains("(the definition of removed orders/hour)");
    }

    @Test
    void reorderingTheFileChangesNothing() {
        String reordered = ORDERS + SPEND.replace("[APPROVED, DECLINED]", "[DECLINED, APPROVED]")
                .replace("[sum, count, max]", "[max, sum, count]").replace("[hour, day]", "[day, hour]");
        RulesPlan p = plan(SPEND + ORDERS, reordered);
        assertThat(p.changes()).isFalse();
        assertThat(p.unchanged()).hasSize(3);
    }

    @Test
    void theRenderingIsOneLinePerChangeAndACount() {
        String v2 = SPEND.replace("in: [APPROVED, DECLINED]", "in: [APPROVED]").replace("units: [hour, day]", "units: [hour, day, month]")
                + """
                  - name: orders-per-customer
                    entity: customerId
                    value: one
                    aggregations: [count]
                    units: [day]
                    retention: P35D
                """;
        RulesPlan p = plan(SPEND + ORDERS, v2);
        List<String> lines = p.render().lines().toList();
        assertThat(lines).hasSize(7);
        assertThat(lines.get(0)).isEqualTo("grade                    change     version");
        assertThat(lines.get(1)).matches("spend/hour               changed    [0-9a-f]{12} -> [0-9a-f]{12}");
        assertThat(lines.get(2)).matches("spend/day                changed    [0-9a-f]{12} -> [0-9a-f]{12}");
        assertThat(lines.get(3)).matches("spend/month              added      [0-9a-f]{12}");
        assertThat(lines.get(4)).matches("orders-per-customer/day  added      [0-9a-f]{12}");
        assertThat(lines.get(5)).matches("orders/hour              removed    [0-9a-f]{12}");
        assertThat(lines.get(6)).isEqualTo("2 added, 2 changed, 1 removed (5 grades)");
    }

    @Test
    void aGradeListedTwiceIsRefused() {
        GradeVersion g = new GradeVersion("spend", TimeUnit.DAY, "0123456789ab");
        assertThatThrownBy(() -> RulesPlan.between(List.of(g, g), List.of())).hasMessageContaining("spend/day twice");
    }
}
