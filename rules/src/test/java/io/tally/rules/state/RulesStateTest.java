package io.tally.rules.state;

import static io.tally.rules.RuleVersionsTest.SPEND;
import static io.tally.rules.RuleVersionsTest.versions;
import static io.tally.rules.RulesPlanTest.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.TimeUnit;
import io.tally.rules.RulesPlan;
import io.tally.rules.state.RulesState.Backfill;
import io.tally.rules.state.RulesState.Grade;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RulesStateTest {
    static final Instant T0 = Instant.parse("2026-11-01T00:00:00Z");
    static final Instant SEAM = Instant.parse("2026-11-02T00:01:00Z");

    static RulesState first(String rules) {
        return RulesState.first(versions(rules), "v1.yaml", "rules:\n" + rules, T0);
    }

    @Test
    void theFirstRecordCountsEveryGradeFromTheStart() {
        RulesState s = first(SPEND + ORDERS);
        assertThat(s.generation()).isZero();
        assertThat(s.grades()).extracting(Grade::grade).containsExactly("spend/hour", "spend/day", "orders/hour");
        assertThat(s.grades()).allSatisfy(g -> {
            assertThat(g.since()).isZero();
            assertThat(g.countingFrom()).isNull();
            assertThat(g.complete()).isTrue();
            assertThat(g.incomplete(Instant.EPOCH)).isFalse();
        });
        assertThat(s.rules().rules()).hasSize(2);
    }

    @Test
    void nextCountsAddedAndChangedGradesFromTheSeamAndRetiresWhatGoes() {
        RulesState s = first(SPEND + ORDERS);
        String v2 = SPEND.replace("in: [APPROVED, DECLINED]", "in: [APPROVED]").replace("units: [hour, day]", "units: [hour, day, month]");
        RulesState n = s.next(RulesPlan.between(s.versions(), versions(v2)), "v2.yaml", "rules:\n" + v2, T0.plusSeconds(60), SEAM);
        assertThat(n.generation()).isEqualTo(1);
        assertThat(n.grades()).extracting(Grade::grade).containsExactly("spend/hour", "spend/day", "spend/month");
        assertThat(n.grades()).allSatisfy(g -> {
            assertThat(g.since()).isEqualTo(1);
            assertThat(g.countingFrom()).isEqualTo(SEAM);
            assertThat(g.backfill()).isEqualTo(Backfill.PENDING);
        });
        assertThat(n.retired()).extracting(r -> r.rule() + "/" + r.unit().code() + " " + r.changed())
                .containsExactly("spend/hour true", "spend/day true", "orders/hour false");
        Grade hour = n.grade("spend", TimeUnit.HOUR).orElseThrow();
        assertThat(hour.incomplete(SEAM.minusSeconds(60))).isTrue();
        assertThat(hour.incomplete(SEAM)).isFalse();

        RulesState done = n.backfilled("spend", TimeUnit.HOUR);
        assertThat(done.grade("spend", TimeUnit.HOUR).orElseThrow().incomplete(T0)).isFalse();
        assertThat(done.grade("spend", TimeUnit.DAY).orElseThrow().incomplete(T0)).isTrue();
    }

    @Test
    void anUnchangedGradeKeepsItsGenerationAndSeam() {
        RulesState s = first(SPEND);
        RulesState n = s.next(RulesPlan.between(s.versions(), versions(SPEND + ORDERS)), "v2", "rules:\n" + SPEND + ORDERS, T0, SEAM);
        assertThat(n.grade("spend", TimeUnit.DAY).orElseThrow()).isEqualTo(s.grade("spend", TimeUnit.DAY).orElseThrow());
        assertThat(n.grade("orders", TimeUnit.HOUR).orElseThrow().since()).isEqualTo(1);
        assertThat(n.retired()).isEmpty();
    }

    @Test
    void jsonRoundTrips() {
        RulesState s = first(SPEND + ORDERS);
        RulesState n = s.next(RulesPlan.between(s.versions(), versions(SPEND)), "v2", "rules:\n" + SPEND, T0, SEAM)
                .next(RulesPlan.between(versions(SPEND), versions(SPEND + ORDERS)), "v3", "rules:\n" + SPEND + ORDERS, T0, SEAM.plusSeconds(9));
        assertThat(RulesState.fromJson(n.toJson().toString())).isEqualTo(n);
        assertThat(n.toJson().get("pk").asText()).isEqualTo(RulesState.PK);
        assertThat(n.toJson().get("id").asText()).isEqualTo(RulesState.ID);
        assertThatThrownBy(() -> RulesState.fromJson("{\"generation\": 1}")).hasMessageContaining("not a rules-state record");
    }

    @Test
    void verCarriesTheGenerationAboveEveryCountADocumentReaches() {
        long ver = RulesState.verFloor(3) + 1_000_000_000_000L;
        assertThat(RulesState.generationOf(ver)).isEqualTo(3);
        assertThat(RulesState.generationOf(1_000_000_000_000L)).isZero();
        assertThat(RulesState.verFloor(RulesState.MAX_GENERATION) + (1L << RulesState.VER_GENERATION_SHIFT) - 1)
                .isLessThanOrEqualTo(1L << 53);
        assertThatThrownBy(() -> new RulesState(RulesState.MAX_GENERATION + 1, T0, "x", "rules: []", java.util.List.of(), java.util.List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
