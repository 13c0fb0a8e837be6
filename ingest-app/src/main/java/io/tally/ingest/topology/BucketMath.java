package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import java.math.BigDecimal;

/**
 * Stage 5's arithmetic, shared by the live aggregation and replay so the two cannot disagree: a
 * bucket's absolute value after one more delta. {@code ver} counts the deltas applied, so a replay of
 * the same input gives every bucket the {@code ver} the live run gave it. Decimals stay exact.
 */
public final class BucketMath {
    private BucketMath() {}

    /** {@code agg} with one delta of {@code bundle} added; {@code agg == null} starts the bucket. */
    public static BucketDocument apply(BucketDocument agg, EntityDeltas bundle, EntityDeltas.Delta d, BucketStarts starts) {
        if (agg == null) return bundle.first(d, starts.isoStart(d.unit(), d.bucketIndex()));
        BigDecimal v = d.value(bundle.amount());
        int a = d.aggregations();
        return new BucketDocument(agg.pk(), agg.id(), agg.grade(), agg.unit(), agg.bucket(),
                (a & EntityDeltas.SUM) != 0 ? add(agg.sum(), v) : agg.sum(), agg.count() + 1,
                (a & EntityDeltas.MIN) != 0 ? min(agg.min(), v) : agg.min(),
                (a & EntityDeltas.MAX) != 0 ? max(agg.max(), v) : agg.max(),
                agg.ver() + 1, agg.ttl(), null);
    }

    private static BigDecimal add(BigDecimal a, BigDecimal b) {
        return a == null ? b : a.add(b);
    }

    private static BigDecimal min(BigDecimal a, BigDecimal b) {
        return a == null || b.compareTo(a) < 0 ? b : a;
    }

    private static BigDecimal max(BigDecimal a, BigDecimal b) {
        return a == null || b.compareTo(a) > 0 ? b : a;
    }
}
