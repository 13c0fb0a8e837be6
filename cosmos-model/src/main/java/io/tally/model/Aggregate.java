package io.tally.model;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.math.BigDecimal;

/**
 * The sum, count, minimum and maximum of some events, and the one way two of them combine: exactly, in decimal
 * arithmetic (money never passes through a double). A null sum, min or max means "not aggregated by the rule, or
 * nothing yet": it never wins and never adds. Stage 5 combines a bucket with its deltas with these, and the read
 * API combines the buckets of a roll-up, so both sides agree on every value.
 */
@JsonDeserialize(using = EntityBucketJson.AggregateReader.class) // the stored form: [count, sum, min, max]
public record Aggregate(BigDecimal sum, long count, BigDecimal min, BigDecimal max) {
    /** Nothing counted: the identity of {@link #plus}. */
    public static final Aggregate NONE = new Aggregate(null, 0, null, null);

    /** A bucket document's values. */
    public static Aggregate of(BucketDocument d) {
        return new Aggregate(d.sum(), d.count(), d.min(), d.max());
    }

    /** This and {@code other} as one. */
    public Aggregate plus(Aggregate other) {
        return new Aggregate(sum(sum, other.sum), count + other.count, min(min, other.min), max(max, other.max));
    }

    public static BigDecimal sum(BigDecimal a, BigDecimal b) {
        return a == null ? b : b == null ? a : a.add(b);
    }

    public static BigDecimal min(BigDecimal a, BigDecimal b) {
        return a == null ? b : b == null || a.compareTo(b) <= 0 ? a : b;
    }

    public static BigDecimal max(BigDecimal a, BigDecimal b) {
        return a == null ? b : b == null || a.compareTo(b) >= 0 ? a : b;
    }
}
