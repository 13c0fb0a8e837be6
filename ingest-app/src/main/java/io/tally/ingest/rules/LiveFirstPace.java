package io.tally.ingest.rules;

import java.time.Duration;

/**
 * How fast the backfill reads, from how far behind the live aggregation is on the same input: live first. The backfill
 * shares the broker, stage 5, the sink and, on a small deployment, the cores with the live run; a fixed rate that is
 * harmless on one deployment crowds out live updates on another. So the rate is additive-increase,
 * multiplicative-decrease on one signal: the live aggregation's lag on its input, in seconds of that input (records
 * between the live run's committed offsets and the ends, over the rate the ends grow at).
 *
 * <ul>
 *   <li>Behind by more than {@code lagBound}: the rate halves, at most once per {@code cooldown} (the lag answers a change
 *       about one commit later), never below a thirty-second of the maximum, so the backfill always ends.</li>
 *   <li>Otherwise it grows by a sixteenth of the maximum per observation, up to the maximum.</li>
 *   <li>It starts at a quarter of the maximum: a backfill's start (a new Kafka Streams application, its first fetches)
 *       is its heaviest moment, and the lag shows that only after it happened.</li>
 * </ul>
 *
 * <p>An input that grows by less than one record per second is idle: its lag in records says nothing about time, and
 * an idle live run cannot be crowded out, so the rate grows.
 *
 * <p>Thread contract: one thread observes; {@link #rate()} may be read from any.
 */
final class LiveFirstPace {
    private static final double EWMA_WEIGHT = 0.2;

    private final double max;
    private final double floor;
    private final double lagBoundSeconds;
    private final long cooldownNanos;
    private volatile double rate;
    private long lastCutNanos = Long.MIN_VALUE / 2;
    private long lastNanos;
    private long lastEnds = -1;
    private double inputPerSecond;
    private double lagSeconds;

    /** @param max records per second at most (> 0) */
    LiveFirstPace(double max, Duration lagBound, Duration cooldown) {
        if (max <= 0) throw new IllegalArgumentException("max must be > 0: " + max);
        this.max = max;
        this.floor = max / 32;
        this.lagBoundSeconds = lagBound.toNanos() / 1e9;
        this.cooldownNanos = cooldown.toNanos();
        this.rate = max / 4;
    }

    /**
     * One look at the live run: the sum of its input partitions' end offsets and of the live aggregation's committed
     * offsets on them. Returns the rate from now on.
     */
    double observe(long nowNanos, long ends, long committed) {
        if (lastEnds >= 0 && nowNanos > lastNanos) {
            double perSecond = (ends - lastEnds) / ((nowNanos - lastNanos) / 1e9);
            inputPerSecond = inputPerSecond == 0 ? perSecond : EWMA_WEIGHT * perSecond + (1 - EWMA_WEIGHT) * inputPerSecond;
        }
        lastEnds = ends;
        lastNanos = nowNanos;
        long lag = Math.max(0, ends - committed);
        lagSeconds = inputPerSecond < 1 ? 0 : lag / inputPerSecond;
        if (lagSeconds > lagBoundSeconds) {
            if (nowNanos - lastCutNanos >= cooldownNanos) {
                rate = Math.max(floor, rate / 2);
                lastCutNanos = nowNanos;
            }
        } else {
            rate = Math.min(max, rate + max / 16);
        }
        return rate;
    }

    double rate() {
        return rate;
    }

    /** The live aggregation's lag at the last observation, in seconds of its input. */
    double lagSeconds() {
        return lagSeconds;
    }
}
