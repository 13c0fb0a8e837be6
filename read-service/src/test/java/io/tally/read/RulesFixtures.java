package io.tally.read;

import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesState.Backfill;
import io.tally.rules.state.RulesState.Grade;
import io.tally.rules.state.RulesState.Retired;
import java.time.Instant;
import java.util.List;

/** Rules records as a deployment's {@code ./tally rules} would leave them, for the tests of this package. */
final class RulesFixtures {
    private RulesFixtures() {}

    static final Instant APPLIED = Instant.parse("2026-11-01T00:00:00Z");
    /** Where live counting of the grades added by generation 2 starts: mid-day, on an hour boundary. */
    static final Instant SEAM = Instant.parse("2026-11-02T10:00:00Z");

    static final String SPEND = """
              - name: spend
                entity: customerId
                value: amount
                aggregations: [sum, count]
                units: [hour, day]
                retention: P35D
            """;
    static final String ORDERS = """
              - name: orders
                entity: customerId
                value: one
                aggregations: [count]
                units: [hour]
                retention: P7D
            """;

    static GradeRules file() {
        return GradeRules.parse("rules:\n" + SPEND + ORDERS, "file.yaml");
    }

    /** Generation 0: spend and orders, counted from the start. */
    static RulesState first() {
        return new RulesState(0, APPLIED, "v1.yaml", "rules:\n" + SPEND + ORDERS, List.of(
                new Grade("spend", TimeUnit.HOUR, "aaaaaaaaaaaa", 0, null, Backfill.NONE),
                new Grade("spend", TimeUnit.DAY, "bbbbbbbbbbbb", 0, null, Backfill.NONE),
                new Grade("orders", TimeUnit.HOUR, "cccccccccccc", 0, null, Backfill.NONE)), List.of());
    }

    /**
     * Generation 2: spend/day changed (counted from {@link #SEAM}, history pending), spend/hour unchanged, orders
     * removed.
     */
    static RulesState second() {
        return new RulesState(2, APPLIED.plusSeconds(86_400), "v2.yaml", "rules:\n" + SPEND, List.of(
                new Grade("spend", TimeUnit.HOUR, "aaaaaaaaaaaa", 0, null, Backfill.NONE),
                new Grade("spend", TimeUnit.DAY, "dddddddddddd", 2, SEAM, Backfill.PENDING)), List.of(
                new Retired("spend", TimeUnit.DAY, "bbbbbbbbbbbb", 2, true),
                new Retired("orders", TimeUnit.HOUR, "cccccccccccc", 2, false)));
    }
}
