package io.tally.ingest.topology;

import io.tally.rules.GradeRule;
import io.tally.rules.GradeRule.Aggregation;
import io.tally.rules.GradeRules;
import io.tally.model.BucketKey;
import io.tally.model.TimeUnit;
import io.tally.schemas.avro.TransactionEvent;
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
 * is present, and it is younger than the rule's retention, measured against the record timestamp:
 * an older event's bucket would already have expired in Cosmos.
 */
public final class FanOut {
    private final List<CompiledRule> rules;

    public FanOut(GradeRules rules) {
        this.rules = rules.rules().stream().map(CompiledRule::new).toList();
    }

    /** The event's deltas grouped by pk, in rule order. */
    public List<EntityDeltas> deltas(TransactionEvent event, long recordTimestampMs) {
        long timeMs = event.getEventTime().toEpochMilli();
        String domain = event.getDomain();
        // Rules mostly share entities (customer, email, postal code): a short map keeps one bundle per pk.
        Map<String, List<EntityDeltas.Delta>> byPk = new LinkedHashMap<>(8);
        for (CompiledRule r : rules) {
            if (timeMs < recordTimestampMs - r.retentionMs || !r.accepts(event)) continue;
            String entity = r.value(event, r.entityPos);
            if (entity == null) continue;
            String qualifier = r.qualifierPos < 0 ? null : r.value(event, r.qualifierPos);
            if (r.qualifierPos >= 0 && qualifier == null) continue;
            List<EntityDeltas.Delta> deltas = byPk.computeIfAbsent(BucketKey.partitionKey(domain, entity), pk -> new ArrayList<>(4));
            for (TimeUnit unit : r.rule.units()) {
                deltas.add(EntityDeltas.Delta.of(r.rule.name(), qualifier, unit, unit.bucketIndex(event.getEventTime()), r.aggregations, r.ttlSeconds,
                        event.getAmount()));
            }
        }
        List<EntityDeltas> out = new ArrayList<>(byPk.size());
        byPk.forEach((pk, deltas) -> out.add(new EntityDeltas(pk, deltas)));
        return out;
    }

    /** A rule with its field positions resolved once, so the per-event path does no lookups by name. */
    private static final class CompiledRule {
        final GradeRule rule;
        final int entityPos;
        final int qualifierPos;
        final int filterPos;
        final long retentionMs;
        final int ttlSeconds;
        final int aggregations;

        CompiledRule(GradeRule rule) {
            this.rule = rule;
            this.entityPos = pos(rule.entityField());
            this.qualifierPos = rule.qualifierField().map(CompiledRule::pos).orElse(-1);
            this.filterPos = rule.filter().map(f -> pos(f.field())).orElse(-1);
            this.retentionMs = rule.retention().toMillis();
            this.ttlSeconds = rule.ttlSeconds();
            this.aggregations = (rule.aggregations().contains(Aggregation.SUM) ? EntityDeltas.SUM : 0)
                    | (rule.aggregations().contains(Aggregation.MIN) ? EntityDeltas.MIN : 0)
                    | (rule.aggregations().contains(Aggregation.MAX) ? EntityDeltas.MAX : 0)
                    | (rule.value() == GradeRule.ValueSource.ONE ? EntityDeltas.VALUE_ONE : 0);
        }

        boolean accepts(TransactionEvent e) {
            if (filterPos < 0) return true;
            String v = value(e, filterPos);
            return v != null && rule.filter().orElseThrow().in().contains(v);
        }

        String value(TransactionEvent e, int pos) {
            Object v = e.get(pos);
            if (v == null) return null;
            String s = v.toString();
            return s.isBlank() ? null : s;
        }

        static int pos(String field) {
            return TransactionEvent.getClassSchema().getField(field).pos();
        }
    }
}
