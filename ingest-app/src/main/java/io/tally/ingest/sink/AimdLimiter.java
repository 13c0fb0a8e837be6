package io.tally.ingest.sink;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Additive-increase / multiplicative-decrease limit on concurrent bulk calls. A call that met
 * congestion (429, 408, 503) halves the limit, at most once per {@code cooldownNanos} so a burst of
 * throttled calls that were all in flight together counts as one signal; every {@code limit} clean
 * calls add one. {@link #limit()} is exported as a gauge.
 *
 * <p>Thread-safe: permits are taken and returned from Reactor threads. Waiters are completed outside
 * the lock.
 */
public final class AimdLimiter {
    private final int min;
    private final int max;
    private final long cooldownNanos;
    private final ArrayDeque<MonoSink<Void>> waiters = new ArrayDeque<>();
    private int limit;
    private int inUse;
    private int cleanSinceIncrease;
    private long lastDecreaseNanos;

    public AimdLimiter(int initial, int min, int max, long cooldownNanos) {
        this.limit = initial;
        this.min = min;
        this.max = max;
        this.cooldownNanos = cooldownNanos;
        this.lastDecreaseNanos = System.nanoTime() - cooldownNanos;
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
        List<MonoSink<Void>> wake = new ArrayList<>();
        synchronized (this) {
            inUse--;
            long now = System.nanoTime();
            if (congested) {
                cleanSinceIncrease = 0;
                if (now - lastDecreaseNanos >= cooldownNanos) {
                    limit = Math.max(min, limit / 2);
                    lastDecreaseNanos = now;
                }
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
