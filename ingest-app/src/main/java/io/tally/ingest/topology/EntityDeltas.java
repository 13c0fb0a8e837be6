package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import io.tally.model.BucketId;
import io.tally.model.BucketKey;
import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.util.List;

/**
 * What one or more events add to one Cosmos logical partition: a delta per (grade, unit, bucket) of that
 * entity. Stage 3 emits one per pk per commit interval, each delta combining every event of the interval
 * that counts for its bucket ({@link PendingDeltas}), and stage 4 repartitions them by pk, so an entity
 * crosses the broker once per interval rather than once per event or per bucket.
 */
public record EntityDeltas(String pk, List<Delta> deltas) {

    /** Bits of {@link Delta#aggregations}. COUNT is always kept: {@code count} and {@code ver} need it. */
    public static final int SUM = 1, MIN = 2, MAX = 4, VALUE_ONE = 8;

    public EntityDeltas {
        deltas = List.copyOf(deltas);
    }

    /**
     * One bucket's share of the events combined: how many counted, and the sum, minimum and maximum of
     * their values (the amount, or 1 for a rule whose value is {@code one}), each present only when the
     * rule aggregates it. {@code count} is also how far the bucket's {@code ver} moves, so a bucket's
     * {@code ver} stays the number of events it holds however they were combined on the way.
     *
     * @param aggregations {@link #SUM}, {@link #MIN}, {@link #MAX} bits, plus {@link #VALUE_ONE} when the rule counts 1
     * @param ttlSeconds   the rule's retention, the document's ttl
     */
    public record Delta(String grade, TimeUnit unit, long bucketIndex, int aggregations, int ttlSeconds,
                        long count, BigDecimal sum, BigDecimal min, BigDecimal max) {

        /** One event's delta: count 1, and its value as sum, min and max where the rule aggregates them. */
        public static Delta of(String grade, TimeUnit unit, long bucketIndex, int aggregations, int ttlSeconds, BigDecimal amount) {
            BigDecimal v = (aggregations & VALUE_ONE) != 0 ? BigDecimal.ONE : amount;
            return new Delta(grade, unit, bucketIndex, aggregations, ttlSeconds, 1,
                    (aggregations & SUM) != 0 ? v : null, (aggregations & MIN) != 0 ? v : null, (aggregations & MAX) != 0 ? v : null);
        }

        /** The document id, {@code grade|unit|bucketIndex}. */
        public String id() {
            return BucketId.format(grade, unit, bucketIndex);
        }

        /** This delta and a later one of the same bucket as one. */
        public Delta plus(Delta later) {
            return new Delta(grade, unit, bucketIndex, aggregations, ttlSeconds, count + later.count,
                    BucketMath.add(sum, later.sum), BucketMath.min(min, later.min), BucketMath.max(max, later.max));
        }

        /** A bucket holding just this delta. */
        BucketDocument first(String pk, String bucketStart) {
            return new BucketDocument(pk, id(), grade, unit.code(), bucketStart, sum, count, min, max, count, ttlSeconds, null);
        }
    }

    /** The state key of a delta's bucket, {@code pk|id}: also the key of its record on {@code bucket-updates}. */
    public String bucketKey(Delta d) {
        return BucketKey.updateKey(pk, d.id());
    }
}
