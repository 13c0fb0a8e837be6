package io.tally.ingest.topology;

import io.tally.model.Aggregate;
import io.tally.model.BucketDocument;
import java.math.BigDecimal;

/**
 * Stage 5's arithmetic, shared by the live aggregation and replay so the two cannot disagree: a
 * bucket's absolute value after one more delta. {@code ver} counts the events applied (a combined delta
 * moves it by its count), so a replay of the same input gives every bucket the {@code ver} the live run
 * gave it, however the live run combined them. The combine itself is the document model's ({@link Aggregate}),
 * the one the read API's roll-ups use too.
 */
public final class BucketMath {
    private BucketMath() {}

    /** {@code agg} with {@code d} added; {@code agg == null} starts the bucket in partition {@code pk}. */
    public static BucketDocument apply(BucketDocument agg, String pk, EntityDeltas.Delta d, BucketStarts starts) {
        if (agg == null) return d.first(pk, starts.isoStart(d.unit(), d.bucketIndex()));
        return new BucketDocument(agg.pk(), agg.id(), agg.grade(), agg.unit(), agg.bucket(),
                add(agg.sum(), d.sum()), agg.count() + d.count(), min(agg.min(), d.min()), max(agg.max(), d.max()),
                agg.ver() + d.count(), agg.ttl(), null);
    }

    /** Null is "not aggregated" (or nothing yet): it never wins and never adds. */
    static BigDecimal add(BigDecimal a, BigDecimal b) {
        return Aggregate.sum(a, b);
    }

    static BigDecimal min(BigDecimal a, BigDecimal b) {
        return Aggregate.min(a, b);
    }

    static BigDecimal max(BigDecimal a, BigDecimal b) {
        return Aggregate.max(a, b);
    }
}
