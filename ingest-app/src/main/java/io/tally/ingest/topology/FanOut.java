package io.tally.ingest.topology;

import io.tally.rules.GradeRule;
import io.tally.rules.GradeRule.Aggregation;
import io.tally.rules.GradeRules;
import io.tally.rules.source.RuleFields;
import io.tally.rules.source.SourceEvent;
import io.tally.model.BucketKey;
import io.tally.model.TimeUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Stage 3: one event becomes, per Cosmos logical partition it touches, one {@link EntityDeltas} holding a
 * delta (count 1) per (rule, unit) it counts for. The live topology combines them per bucket until the next
 * commit ({@link PendingDeltas}); replay applies them one by one. Stage 5 applies each delta to its bucket.
 *
 * <p>An event counts for a rule when the rule's filter accepts it, its entity (and qualifier) value
 * is present, it has an amount if the rule needs one, and it is younger than the rule's retention, measured against
 * the record timestamp: an older event's bucket would already have expired in Cosmos. Rule fields are read from the
 * event's slots ({@link RuleFields}), filled at stage 1 from whichever schema the event came in.
 */
public final class FanOut {
    private final List<CompiledRule> rules;

    /** The units any rule keeps: the only bucket indexes an event needs. */
    private final TimeUnit[] units;

    private final int slots;
    private final long generation;

    /** The live run's fan-out when every grade is counted from the start. */
    public FanOut(GradeRules rules, RuleFields fields) {
        this(rules, fields, CountedGrades.fromStart(rules), CountedGrades.Side.LIVE);
    }

    /** The fan-out of {@code side} of each grade's seam ({@link CountedGrades}). */
    public FanOut(GradeRules rules, RuleFields fields, CountedGrades counted, CountedGrades.Side side) {
        this.rules = rules.rules().stream().map(r -> new CompiledRule(r, fields, counted, side)).toList();
        this.generation = counted.generation();
        this.units = rules.units().toArray(TimeUnit[]::new);
        this.slots = fields.names().size();
    }

    /** The retention in seconds of rule {@code name}, -1 when this fan-out has no such rule. */
    public int ttlSeconds(String name) {
        for (CompiledRule r : rules) if (r.rule.name().equals(name)) return r.ttlSeconds;
        return -1;
    }

    /** The event's deltas grouped by pk, in rule order. */
    public List<EntityDeltas> deltas(SourceEvent event, long recordTimestampMs) {
        long timeMs = event.eventTimeMs();
        String domain = event.domain();
        // Rules mostly share entities (customer, email, postal code): a short map keeps one bundle per pk, and each
        // entity field's bundle is looked up once per event, not once per rule (36 rules over 5 fields: 5 lookups).
        Map<String, List<EntityDeltas.Delta>> byPk = new LinkedHashMap<>(8);
        List<EntityDeltas.Delta>[] byEntityField = bundles(slots);
        long[] bucketIndex = indexes(event);
        for (CompiledRule r : rules) {
            if (timeMs < recordTimestampMs - r.retentionMs || !r.counts(timeMs, recordTimestampMs) || !r.accepts(event)) continue;
            if (r.needsAmount && event.amount() == null) continue; // the source has no amount
            List<EntityDeltas.Delta> deltas = byEntityField[r.entityPos];
            if (deltas == null) {
                String entity = event.field(r.entityPos);
                if (entity == null) continue;
                deltas = byEntityField[r.entityPos] = byPk.computeIfAbsent(BucketKey.partitionKey(domain, entity), pk -> new ArrayList<>(4));
            }
            String qualifier = r.qualifierPos < 0 ? null : event.field(r.qualifierPos);
            if (r.qualifierPos >= 0 && qualifier == null) continue;
            for (TimeUnit unit : r.rule.units()) {
                if (!r.counts(unit, timeMs, recordTimestampMs)) continue;
                deltas.add(EntityDeltas.Delta.of(r.rule.name(), qualifier, unit, bucketIndex[unit.ordinal()], r.aggregations, r.ttlSeconds,
                        event.amount()));
            }
        }
        List<EntityDeltas> out = new ArrayList<>(byPk.size());
        byPk.forEach((pk, deltas) -> out.add(new EntityDeltas(pk, deltas, generation)));
        return out;
    }

    /**
     * One slot per event field for the bundle of the entity that field names in this event (null: not looked up yet).
     * An entity field whose value is absent leaves its slot null and is looked up again by the next rule over it,
     * which finds it absent too: cheap, and it keeps "absent" out of the cache.
     */
    @SuppressWarnings("unchecked")
    private static List<EntityDeltas.Delta>[] bundles(int fields) {
        return (List<EntityDeltas.Delta>[]) new List<?>[fields];
    }

    /** The event's bucket index in each unit a rule keeps, computed once per event rather than per rule. */
    private long[] indexes(SourceEvent event) {
        long[] out = new long[TimeUnit.values().length];
        for (TimeUnit u : units) out[u.ordinal()] = u.bucketIndex(event.eventTimeMs());
        return out;
    }

    /** A rule with its fields' slots resolved once, so the per-event path does no lookups by name. */
    private static final class CompiledRule {
        final GradeRule rule;
        final int entityPos;
        final int qualifierPos;
        final int filterPos;
        final long retentionMs;
        final int ttlSeconds;
        final int aggregations;
        final boolean needsAmount;
        /** Per unit ordinal, the seam of this rule's grade in it ({@link CountedGrades#seamMs}). */
        final long[] seamMs = new long[TimeUnit.values().length];
        final boolean live;
        /** The seam of the unit that counts the most events on this side: a rule no unit counts is skipped before its filter is read. */
        final long widestSeamMs;

        CompiledRule(GradeRule rule, RuleFields fields, CountedGrades counted, CountedGrades.Side side) {
            this.rule = rule;
            this.live = side == CountedGrades.Side.LIVE;
            long widest = live ? Long.MAX_VALUE : Long.MIN_VALUE;
            for (TimeUnit u : rule.units()) {
                long seam = seamMs[u.ordinal()] = counted.seamMs(rule.name(), u, side);
                widest = live ? Math.min(widest, seam) : Math.max(widest, seam);
            }
            this.widestSeamMs = widest;
            this.entityPos = fields.slot(rule.entityField());
            this.qualifierPos = rule.qualifierField().map(fields::slot).orElse(-1);
            this.filterPos = rule.filter().map(f -> fields.slot(f.field())).orElse(-1);
            this.retentionMs = rule.retention().toMillis();
            this.ttlSeconds = rule.ttlSeconds();
            this.aggregations = (rule.aggregations().contains(Aggregation.SUM) ? EntityDeltas.SUM : 0)
                    | (rule.aggregations().contains(Aggregation.MIN) ? EntityDeltas.MIN : 0)
                    | (rule.aggregations().contains(Aggregation.MAX) ? EntityDeltas.MAX : 0)
                    | (rule.value() == GradeRule.ValueSource.ONE ? EntityDeltas.VALUE_ONE : 0);
            // A count needs no amount: a rule over the amount that only counts still counts a source without one.
            this.needsAmount = rule.value() == GradeRule.ValueSource.AMOUNT
                    && (aggregations & (EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX)) != 0;
        }

        /** Whether the event counts for some unit of this rule on this fan-out's side of the seams. */
        boolean counts(long timeMs, long recordTimestampMs) {
            return onSide(widestSeamMs, timeMs, recordTimestampMs);
        }

        boolean counts(TimeUnit unit, long timeMs, long recordTimestampMs) {
            return onSide(seamMs[unit.ordinal()], timeMs, recordTimestampMs);
        }

        private boolean onSide(long seam, long timeMs, long recordTimestampMs) {
            boolean after = timeMs >= seam || recordTimestampMs >= seam;
            return live ? after : !after;
        }

        boolean accepts(SourceEvent e) {
            if (filterPos < 0) return true;
            String v = e.field(filterPos);
            return v != null && rule.filter().orElseThrow().in().contains(v);
        }
    }
}
