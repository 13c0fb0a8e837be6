package io.tally.ingest.topology;

import io.tally.ingest.rules.GradeRule;
import io.tally.ingest.rules.GradeRule.Aggregation;
import io.tally.ingest.rules.GradeRules;
import io.tally.model.BucketDocument;
import io.tally.model.BucketKey;
import io.tally.model.TimeUnit;
import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;

/**
 * Stage 3: one event becomes one delta per (rule, unit) it counts for. A delta is a bucket document
 * holding just this event (count 1, ver 1); stage 5 merges deltas into absolute values.
 *
 * <p>An event counts for a rule when the rule's filter accepts it, its entity (and qualifier) value
 * is present, and it is younger than the rule's retention, measured against the record timestamp:
 * an older event's bucket would already have expired in Cosmos.
 */
public final class FanOut {
    private final List<CompiledRule> rules;
    private final long[] lastIndex = new long[TimeUnit.values().length];
    private final String[] lastStart = new String[TimeUnit.values().length];

    public FanOut(GradeRules rules) {
        this.rules = rules.rules().stream().map(CompiledRule::new).toList();
    }

    public List<KeyValue<String, BucketDocument>> deltas(TransactionEvent event, long recordTimestampMs) {
        List<KeyValue<String, BucketDocument>> out = new ArrayList<>(rules.size() * 2);
        Instant time = event.getEventTime();
        for (CompiledRule r : rules) {
            if (time.toEpochMilli() < recordTimestampMs - r.retentionMs || !r.accepts(event)) continue;
            String entity = r.value(event, r.entityPos);
            if (entity == null) continue;
            String qualifier = r.qualifierPos < 0 ? null : r.value(event, r.qualifierPos);
            if (r.qualifierPos >= 0 && qualifier == null) continue;
            BigDecimal v = r.rule.value() == GradeRule.ValueSource.AMOUNT ? event.getAmount() : BigDecimal.ONE;
            for (TimeUnit unit : r.rule.units()) {
                BucketKey key = new BucketKey(event.getDomain(), entity, r.rule.gradeId(qualifier), unit, unit.bucketIndex(time));
                out.add(KeyValue.pair(key.updateKey(), new BucketDocument(key.pk(), key.id(), key.grade(), unit.code(),
                        bucketStart(unit, key.bucketIndex()),
                        r.sum ? v : null, 1, r.min ? v : null, r.max ? v : null, 1, r.rule.ttlSeconds(), null)));
            }
        }
        return out;
    }

    /** ISO start of a bucket; the last one per unit is kept because consecutive events mostly share it. */
    private String bucketStart(TimeUnit unit, long index) {
        int u = unit.ordinal();
        if (lastIndex[u] != index || lastStart[u] == null) {
            lastIndex[u] = index;
            lastStart[u] = unit.bucketStart(index).toString();
        }
        return lastStart[u];
    }

    /** A rule with its field positions resolved once, so the per-event path does no lookups by name. */
    private static final class CompiledRule {
        final GradeRule rule;
        final int entityPos;
        final int qualifierPos;
        final int filterPos;
        final long retentionMs;
        final boolean sum;
        final boolean min;
        final boolean max;

        CompiledRule(GradeRule rule) {
            this.rule = rule;
            this.entityPos = pos(rule.entityField());
            this.qualifierPos = rule.qualifierField().map(CompiledRule::pos).orElse(-1);
            this.filterPos = rule.filter().map(f -> pos(f.field())).orElse(-1);
            this.retentionMs = rule.retention().toMillis();
            this.sum = rule.aggregations().contains(Aggregation.SUM);
            this.min = rule.aggregations().contains(Aggregation.MIN);
            this.max = rule.aggregations().contains(Aggregation.MAX);
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
