package io.tally.ingest.topology;

import io.tally.model.Aggregate;
import io.tally.model.EntityBucket;
import io.tally.model.GradeId;
import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.util.List;

/**
 * What one or more events add to one Cosmos logical partition: a delta per (grade, unit, bucket) of that
 * entity, which stage 5 applies to the entity's bucket documents ({@link EntityBucket}). Stage 3 emits one per pk per commit interval, each delta combining every event of the interval
 * that counts for its bucket ({@link PendingDeltas}), and stage 4 repartitions them by pk, so an entity
 * crosses the broker once per interval rather than once per event or per bucket. {@code generation} is the rules
 * generation the fan-out counted under: deltas computed under older rules may still wait on the topic when a newer
 * generation's stage 5 reads them, and those of a grade it no longer counts that way are not applied.
 */
public record EntityDeltas(String pk, List<Delta> deltas, long generation) {

    /** Bits of {@link Delta#aggregations}. COUNT is always kept: {@code count} and {@code ver} need it. */
    public static final int SUM = 1, MIN = 2, MAX = 4, VALUE_ONE = 8;

    public EntityDeltas {
        deltas = List.copyOf(deltas);
    }

    /** Deltas computed under rules generation 0. */
    public EntityDeltas(String pk, List<Delta> deltas) {
        this(pk, deltas, 0);
    }

    /**
     * One grade bucket's share of the events combined: how many counted, and the sum, minimum and maximum of
     * their values (the amount, or 1 for a rule whose value is {@code one}), each present only when the
     * rule aggregates it. {@code count} is also how far the entity bucket's {@code ver} moves, so a document's
     * {@code ver} stays the number of events it holds however they were combined on the way.
     *
     * @param qualifier    the qualifier value of a qualified rule, else null
     * @param aggregations {@link #SUM}, {@link #MIN}, {@link #MAX} bits, plus {@link #VALUE_ONE} when the rule counts 1
     * @param ttlSeconds   the rule's retention
     */
    public record Delta(String rule, String qualifier, TimeUnit unit, long bucketIndex, int aggregations, int ttlSeconds,
                        long count, BigDecimal sum, BigDecimal min, BigDecimal max) {

        /** One event's delta: count 1, and its value as sum, min and max where the rule aggregates them. */
        public static Delta of(String rule, String qualifier, TimeUnit unit, long bucketIndex, int aggregations, int ttlSeconds,
                               BigDecimal amount) {
            BigDecimal v = (aggregations & VALUE_ONE) != 0 ? BigDecimal.ONE : amount;
            return new Delta(rule, qualifier, unit, bucketIndex, aggregations, ttlSeconds, 1,
                    (aggregations & SUM) != 0 ? v : null, (aggregations & MIN) != 0 ? v : null, (aggregations & MAX) != 0 ? v : null);
        }

        /** The grade id, {@code rule} or {@code rule:qualifier}. */
        public String grade() {
            return GradeId.format(rule, qualifier);
        }

        /** This delta and a later one of the same grade bucket as one. */
        public Delta plus(Delta later) {
            return new Delta(rule, qualifier, unit, bucketIndex, aggregations, ttlSeconds, count + later.count,
                    Aggregate.sum(sum, later.sum), Aggregate.min(min, later.min), Aggregate.max(max, later.max));
        }

        /** Its values as an aggregate, what {@link EntityBucket} adds. */
        public Aggregate aggregate() {
            return new Aggregate(sum, count, min, max);
        }
    }
}
