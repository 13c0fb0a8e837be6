package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.rules.source.RuleFields;
import io.tally.rules.source.SourceEvent;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesState.Backfill;
import io.tally.rules.state.RulesState.Grade;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The seam of a grade added by a rules change: every accepted event counts for it on exactly one side, live or the
 * backfill's history, by its event time and record timestamp alone.
 */
class FanOutSeamTest {
    private static final GradeRules RULES = GradeRules.parse("""
            rules:
              - name: spend
                entity: customerId
                value: amount
                aggregations: [sum, count]
                units: [hour, day]
                retention: P35D
            """, "test");
    private static final RuleFields FIELDS = RuleFields.of(RULES);
    private static final long SEAM = Instant.parse("2026-11-28T04:00:00Z").toEpochMilli();
    private static final long MINUTE = 60_000;

    /** spend/hour counted from the start; spend/day added at generation 1 with its history {@code backfill}. */
    private static CountedGrades dayAdded(Backfill backfill) {
        return CountedGrades.of(new RulesState(1, Instant.EPOCH, "t", "rules: []", List.of(
                new Grade("spend", TimeUnit.HOUR, "a", 0, null, Backfill.NONE),
                new Grade("spend", TimeUnit.DAY, "b", 1, Instant.ofEpochMilli(SEAM), backfill)), List.of()));
    }

    private static SourceEvent event(long timeMs) {
        String[] fields = new String[FIELDS.names().size()];
        fields[FIELDS.slot("customerId")] = "c-1";
        return new SourceEvent("transactions", "t-" + timeMs, timeMs, "shop", new BigDecimal("10.00"), "EUR", fields);
    }

    private static List<TimeUnit> units(FanOut f, long eventTimeMs, long recordTimestampMs) {
        return f.deltas(event(eventTimeMs), recordTimestampMs).stream().flatMap(e -> e.deltas().stream()).map(EntityDeltas.Delta::unit).toList();
    }

    @Test
    void everyEventCountsForTheAddedGradeOnExactlyOneSide() {
        FanOut live = new FanOut(RULES, FIELDS, dayAdded(Backfill.PENDING), CountedGrades.Side.LIVE);
        FanOut history = new FanOut(RULES, FIELDS, dayAdded(Backfill.PENDING), CountedGrades.Side.HISTORY);
        long[][] cases = { // event time, record timestamp
                {SEAM - 10 * MINUTE, SEAM - 9 * MINUTE}, // both before: history
                {SEAM - 10 * MINUTE, SEAM + MINUTE},     // an older event that arrived after the seam: live
                {SEAM + MINUTE, SEAM - MINUTE},          // an event ahead of its record timestamp, across the seam: live
                {SEAM, SEAM},                            // on the seam: live
                {SEAM - 1, SEAM - 1},                    // a millisecond before: history
        };
        for (long[] c : cases) {
            List<TimeUnit> l = units(live, c[0], c[1]);
            List<TimeUnit> h = units(history, c[0], c[1]);
            assertThat(l).as("the live side counts the grade from the start for every event").contains(TimeUnit.HOUR);
            assertThat(h).as("history never counts a grade counted from the start").doesNotContain(TimeUnit.HOUR);
            boolean after = c[0] >= SEAM || c[1] >= SEAM;
            assertThat(l.contains(TimeUnit.DAY)).as("live, event %d record %d", c[0] - SEAM, c[1] - SEAM).isEqualTo(after);
            assertThat(h.contains(TimeUnit.DAY)).as("history, event %d record %d", c[0] - SEAM, c[1] - SEAM).isEqualTo(!after);
        }
    }

    @Test
    void aCompleteGradeHasNoHistoryLeftToCount() {
        FanOut history = new FanOut(RULES, FIELDS, dayAdded(Backfill.COMPLETE), CountedGrades.Side.HISTORY);
        assertThat(history.deltas(event(SEAM - 10 * MINUTE), SEAM - 10 * MINUTE)).isEmpty();
        FanOut live = new FanOut(RULES, FIELDS, dayAdded(Backfill.COMPLETE), CountedGrades.Side.LIVE);
        assertThat(units(live, SEAM - 10 * MINUTE, SEAM - 10 * MINUTE)).containsExactly(TimeUnit.HOUR);
    }
}
