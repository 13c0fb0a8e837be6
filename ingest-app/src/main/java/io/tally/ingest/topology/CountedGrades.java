package io.tally.ingest.topology;

import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesState.Grade;
import java.util.HashMap;
import java.util.Map;

/**
 * The grades one generation of the deployment's rules counts ({@link RulesState}), as stages 3 and 5 need them: on which
 * side of its seam an event counts for each grade, and which grades a document written under an older generation may
 * keep.
 *
 * <p>The seam of a grade added or changed by generation {@code g} is an instant {@code T} ({@code countingFrom}). The
 * live run counts an event for it when the event's time or its Kafka record timestamp is at or after {@code T}; the
 * backfill counts it when both are before {@code T}. The two sides are disjoint and together cover every event,
 * whatever order, partition or instance the events meet: a property of each record, not of where a consumer stood.
 * Event time alone would not do: an event of last week that arrives tomorrow (the late bound allows 35 days) must be
 * counted by someone, and the backfill has stopped reading by then. The record timestamp alone would not either: a
 * bucket starting at or after {@code T} would then wait for the backfill to be complete.
 */
public final class CountedGrades {
    /** Which events a fan-out counts. */
    public enum Side {
        /** The live run: every grade, each from its seam on (a grade counted from the start has none). */
        LIVE,
        /** A backfill: only the grades whose history is pending, each before its seam. */
        HISTORY
    }

    /** The seam of a grade counted from the start: every event is after it, so live counts all and history none. */
    static final long FROM_START = Long.MIN_VALUE;

    private final long generation;
    private final Map<String, Grade> byGrade;

    private CountedGrades(long generation, Map<String, Grade> byGrade) {
        this.generation = generation;
        this.byGrade = byGrade;
    }

    public static CountedGrades of(RulesState state) {
        return new CountedGrades(state.generation(), state.byGrade());
    }

    /** Generation 0 of {@code rules}: every grade counted from the start (a deployment's first record, tests, replay alone). */
    public static CountedGrades fromStart(GradeRules rules) {
        Map<String, Grade> out = new HashMap<>();
        rules.rules().forEach(r -> r.units().forEach(u -> {
            Grade g = new Grade(r.name(), u, "-", 0, null, RulesState.Backfill.NONE);
            out.put(g.grade(), g);
        }));
        return new CountedGrades(0, out);
    }

    public long generation() {
        return generation;
    }

    /** The least {@code ver} of a document written under this generation ({@link RulesState#verFloor}). */
    public long verFloor() {
        return RulesState.verFloor(generation);
    }

    /**
     * The seam of grade {@code rule/unit} as {@code side} sees it, in epoch ms: an event is after it when its time or its
     * record timestamp is at or after it. The live side counts the events after, the history side those before. A grade
     * whose history is not pending is, to the history side, counted from the start ({@link #FROM_START}): nothing before.
     */
    long seamMs(String rule, TimeUnit unit, Side side) {
        Grade g = byGrade.get(rule + "/" + unit.code());
        if (g == null || g.countingFrom() == null) return FROM_START;
        if (side == Side.HISTORY && g.complete()) return FROM_START;
        return g.countingFrom().toEpochMilli();
    }

    /**
     * Whether a document last written under generation {@code documentGeneration} may keep its values of grade
     * {@code rule/unit}: the grade is still counted, and its current version was counted when the document was written.
     * Values of a removed grade, of a changed grade's old version, or of a grade removed and added again are dropped.
     */
    public boolean keeps(String rule, TimeUnit unit, long documentGeneration) {
        Grade g = byGrade.get(rule + "/" + unit.code());
        return g != null && g.since() <= documentGeneration;
    }

    /** Whether grade {@code rule/unit} is counted at all. */
    public boolean counts(String rule, TimeUnit unit) {
        return byGrade.containsKey(rule + "/" + unit.code());
    }
}
