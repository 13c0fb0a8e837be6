package io.tally.loadgen.rules;

import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;

/**
 * Which buckets one accepted event updates under a rule set, keyed exactly as the Cosmos documents:
 * pk = {@code domain|entityValue}, id = {@code grade|unit|bucketIndex}, where grade is the rule name or
 * {@code name:qualifierValue} ({@link BucketRef}). Loadgen's own implementation, kept apart from the
 * pipeline's on purpose.
 *
 * <p>A rule skips an event when its filter does not match, when the entity or qualifier field is null,
 * or when the event is older than the rule's retention at the record's timestamp
 * ({@code timestamp - eventTime > retention}; exactly the retention still counts).
 *
 * <p>Stateless and thread-safe.
 */
public final class RuleEvaluator {

    /** Receives one contribution: the value to add to (and compare into) one bucket. */
    @FunctionalInterface
    public interface Contributions {
        void add(BucketRef bucket, BigDecimal value);
    }

    private final List<Rule> rules;
    private final long[] retentionMillis;

    public RuleEvaluator(RuleSet rules) {
        this.rules = rules.rules();
        this.retentionMillis = this.rules.stream().mapToLong(r -> r.retention().toMillis()).toArray();
    }

    public void evaluate(TransactionEvent e, Instant recordTimestamp, Contributions out) {
        Instant eventTime = e.getEventTime();
        long ageMillis = recordTimestamp.toEpochMilli() - eventTime.toEpochMilli();
        for (int i = 0; i < rules.size(); i++) {
            Rule rule = rules.get(i);
            if (ageMillis > retentionMillis[i]) continue;
            if (rule.filter().isPresent()) {
                String v = EventFields.get(e, rule.filter().get().field());
                if (v == null || !rule.filter().get().values().contains(v)) continue;
            }
            String entity = EventFields.get(e, rule.entity());
            if (entity == null) continue;
            String qualifier = null;
            if (rule.qualifier().isPresent()) {
                qualifier = EventFields.get(e, rule.qualifier().get());
                if (qualifier == null) continue;
            }
            BigDecimal value = rule.value() == Rule.Value.ONE ? BigDecimal.ONE : e.getAmount();
            for (TimeUnit unit : rule.units()) {
                out.add(new BucketRef(e.getDomain(), entity, rule.name(), qualifier, unit, unit.index(eventTime)), value);
            }
        }
    }
}
