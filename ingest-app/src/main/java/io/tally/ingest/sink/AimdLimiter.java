package io.tally.ingest.sink;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Additive-increase / multiplicative-decrease limit on concurrent bulk calls. A call that met
 * congestion (429, 408, 503) halves the limit, at most once per {@code cooldownNanos} so a burst of
 * throttled calls that were all in flight together counts as one signal; every {@code limit} clean
 * calls add one. {@link #limit()} is exported as a gauge.
 *
 * <p>Below a floor ({@link LittleSizer#floor(int)}: a step toward the calls needed in flight to hide the observed
 * latency) a clean call lifts the limit to it, at most doubling (as TCP's slow start does up to its threshold),
 * unless a congestion signal came within {@code floorHoldOffNanos}: latency alone is not congestion, so the
 * limit should not crawl up by one per round while every call takes 10 ms longer, but a throttled sink
 * keeps halving and grows back by AIMD alone.
 *
 * <p>Thread-safe: permits are taken and returned from Reactor threads. Waiters are completed outside
 * the lock.
 */
public final class AimdLimiter {
    private final int min;
    private final int max;
    private final long cooldownNanos;
    private final IntUnaryOperator floor;
    private final long floorHoldOffNanos;
    private final ArrayDeque<MonoSink<Void>> waiters = new ArrayDeque<>();
    private int limit;
    private int inUse;
    private int cleanSinceIncrease;
    private long lastDecreaseNanos;
    private long lastCongestionNanos;

    public AimdLimiter(int initial, int min, int max, long cooldownNanos) {
        this(initial, min, max, cooldownNanos, limit -> 0, 0);
    }

    /**
     * @param floor             from the current limit, what a clean call may lift it to (at most double; 0: no lift); called
     *                          outside the lock
     * @param floorHoldOffNanos the floor is ignored this long after a congestion signal
     */
    public AimdLimiter(int initial, int min, int max, long cooldownNanos, IntUnaryOperator floor, long floorHoldOffNanos) {
        this.limit = initial;
        this.min = min;
        this.max = max;
        this.cooldownNanos = cooldownNanos;
        this.floor = floor;
        this.floorHoldOffNanos = floorHoldOffNanos;
        this.lastDecreaseNanos = System.nanoTime() - cooldownNanos;
        this.lastCongestionNanos = System.nanoTime() - floorHoldOffNanos;
    }

    /** Completes when a permit is free; the caller must {@link #release} it exactly once. */
    public Mono<Void> acquire() {
        return Mono.create(sink -> {
            boolean now;
            synchronized (this) {
                now = inUse < limit;
                if (now) inUse++;
                else waiters.add(sink);
            }
            if (now) sink.success();
        });
    }

    public void release(boolean congested) {
        int lift = congested ? 0 : floor.applyAsInt(limit()); // outside the lock: the sizer has its own
        List<MonoSink<Void>> wake = new ArrayList<>();
        synchronized (this) {
            inUse--;
            long now = System.nanoTime();
            if (congested) {
                cleanSinceIncrease = 0;
                lastCongestionNanos = now;
                if (now - lastDecreaseNanos >= cooldownNanos) {
                    limit = Math.max(min, limit / 2);
                    lastDecreaseNanos = now;
                }
            } else if (lift > limit && now - lastCongestionNanos >= floorHoldOffNanos) {
                limit = Math.min(max, Math.min(lift, 2 * limit));
                cleanSinceIncrease = 0;
            } else if (++cleanSinceIncrease >= limit) {
                limit = Math.min(max, limit + 1);
                cleanSinceIncrease = 0;
            }
            while (inUse < limit && !waiters.isEmpty()) {
                inUse++;
                wake.add(waiters.poll());
            }
        }
        wake.forEach(MonoSink::success);
    }

    public synchronized int limit() { return limit; }

    public synchronized int inUse() { return inUse; }
}
