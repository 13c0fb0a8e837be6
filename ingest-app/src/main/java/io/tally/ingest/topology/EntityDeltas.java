package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.util.List;

/**
 * What one event adds to one Cosmos logical partition: every (grade, unit, bucket) of that entity the
 * event counts for, with the event's value. Stage 3 emits one per (event, pk) and stage 4 repartitions
 * them by pk, so an event crosses the broker once per entity it touches rather than once per bucket
 * (3 records instead of 6 with the default rules).
 *
 * @param amount the event's exact amount; a delta of a rule whose value is {@code one} adds 1 instead
 */
public record EntityDeltas(String pk, BigDecimal amount, List<Delta> deltas) {

    /** Bits of {@link Delta#aggregations}. COUNT is always kept: {@code count} and {@code ver} need it. */
    public static final int SUM = 1, MIN = 2, MAX = 4, VALUE_ONE = 8;

    public EntityDeltas {
        deltas = List.copyOf(deltas);
    }

    /**
     * One bucket's share of the event.
     *
     * @param aggregations {@link #SUM}, {@link #MIN}, {@link #MAX} bits, plus {@link #VALUE_ONE} when the rule counts 1
     * @param ttlSeconds   the rule's retention, the document's ttl
     */
    public record Delta(String grade, TimeUnit unit, long bucketIndex, int aggregations, int ttlSeconds) {
        /** The document id, {@code grade|unit|bucketIndex} (see {@link io.tally.model.BucketKey#id()}). */
        public String id() {
            return grade + '|' + unit.code() + '|' + bucketIndex;
        }

        BigDecimal value(BigDecimal amount) {
            return (aggregations & VALUE_ONE) != 0 ? BigDecimal.ONE : amount;
        }
    }

    /** The state key of a delta's bucket, {@code pk|id}: also the key of its record on {@code bucket-updates}. */
    public String bucketKey(Delta d) {
        return pk + '|' + d.id();
    }

    /** A bucket holding just this delta: count 1, ver 1. */
    public BucketDocument first(Delta d, String bucketStart) {
        BigDecimal v = d.value(amount);
        int a = d.aggregations();
        return new BucketDocument(pk, d.id(), d.grade(), d.unit().code(), bucketStart,
                (a & SUM) != 0 ? v : null, 1, (a & MIN) != 0 ? v : null, (a & MAX) != 0 ? v : null, 1, d.ttlSeconds(), null);
    }
}
