package io.tally.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.rules.GradeRules;
import io.tally.rules.RuleVersions;
import io.tally.rules.RulesPlan;
import io.tally.rules.source.Sources;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class BackfillBenchTest {

    /** The bench compares one grade's backfill with a rebuild of all: v2 must add that grade and change nothing else. */
    @Test
    void v2AddsExactlyTheNewGradeToTheDefaultRules() {
        String v1 = GradeRules.text(GradeRules.BUILTIN_DEFAULT);
        Sources sources = Sources.load(Sources.BUILTIN_DEFAULT);
        RulesPlan plan = RulesPlan.between(RuleVersions.of(GradeRules.parse(v1, "v1"), sources),
                RuleVersions.of(GradeRules.parse(BackfillBench.v2(v1), "v2"), sources));

        assertThat(plan.added()).extracting(RulesPlan.Step::grade).containsExactly(BackfillBench.NEW_RULE + "/day");
        assertThat(plan.changed()).isEmpty();
        assertThat(plan.removed()).isEmpty();
        assertThat(plan.unchanged()).hasSize(5);
    }

    @Test
    void aBucketIsInsideTheRangeOnlyWhenItStartsAndEndsInIt() {
        Instant day = Instant.parse("2026-11-24T00:00:00Z");
        Instant next = Instant.parse("2026-11-25T00:00:00Z");
        long dayIndex = day.getEpochSecond() / 86_400;
        long firstHour = day.getEpochSecond() / 3_600;

        assertThat(BackfillBench.inside("orders-per-customer|day|" + dayIndex, day, next)).isTrue();
        assertThat(BackfillBench.inside("spend-per-customer|hour|" + firstHour, day, next)).isTrue();
        assertThat(BackfillBench.inside("spend-per-customer|hour|" + (firstHour + 23), day, next)).isTrue();
        assertThat(BackfillBench.inside("spend-per-customer|hour|" + (firstHour + 24), day, next)).isFalse();
        assertThat(BackfillBench.inside("spend-per-customer|hour|" + (firstHour - 1), day, next)).isFalse();
        assertThat(BackfillBench.inside("orders-per-customer|day|" + (dayIndex + 1), day, next)).isFalse();
        // a qualifier value may hold the separator: the unit and index are read from the right
        assertThat(BackfillBench.inside("spend-per-customer-sku:a|b|day|" + dayIndex, day, next)).isTrue();
    }
}
