package io.tally.loadgen.truth;

import java.math.BigDecimal;

/**
 * Running aggregate of one expected bucket: exact decimals, never doubles. Not thread-safe; owned by
 * {@link GroundTruth}.
 */
public final class BucketValue {
    private BigDecimal sum = BigDecimal.ZERO;
    private long count;
    private BigDecimal min;
    private BigDecimal max;

    void add(BigDecimal v) {
        sum = sum.add(v);
        count++;
        min = min == null || v.compareTo(min) < 0 ? v : min;
        max = max == null || v.compareTo(max) > 0 ? v : max;
    }

    public BigDecimal sum() { return sum; }

    public long count() { return count; }

    public BigDecimal min() { return min; }

    public BigDecimal max() { return max; }
}
