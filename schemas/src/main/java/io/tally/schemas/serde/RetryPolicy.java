package io.tally.schemas.serde;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How often and how patiently a registry call is repeated after a retriable failure (an I/O error such
 * as a timeout or refused connection, or a 5xx answer). Nothing else is ever retried: a 4xx answer
 * means the request itself is wrong and would fail the same way again.
 *
 * <p>One attempt tries every configured URL once (failover costs no wait); between attempts the caller
 * waits {@link #backoff(int)}: exponential from {@code initialWait}, capped at {@code maxWait}, with
 * "full jitter" (uniform in [0, cap)) so a fleet of clients that lost the registry at the same moment
 * does not come back in lock-step. The defaults are Confluent's (max.retries 3, retries.wait.ms 1000,
 * retries.max.wait.ms 20000): at most 4 attempts and about 7 s of waiting in the worst case.
 *
 * @param maxRetries   attempts after the first one; 0 disables retries
 * @param initialWait  the cap of the first wait; doubles per retry
 * @param maxWait      the largest cap
 */
public record RetryPolicy(int maxRetries, Duration initialWait, Duration maxWait) {
    public static final RetryPolicy DEFAULT = new RetryPolicy(3, Duration.ofSeconds(1), Duration.ofSeconds(20));
    public static final RetryPolicy NONE = new RetryPolicy(0, Duration.ZERO, Duration.ZERO);

    public RetryPolicy {
        if (maxRetries < 0) throw new IllegalArgumentException("maxRetries must be >= 0, not " + maxRetries);
        if (initialWait.isNegative() || maxWait.isNegative()) throw new IllegalArgumentException("waits must be >= 0");
    }

    /** Total attempts, the first one included. */
    public int maxAttempts() {
        return maxRetries + 1;
    }

    /** The cap of the wait before retry number {@code retry} (1-based), without jitter. */
    public long backoffCapMillis(int retry) {
        long initial = initialWait.toMillis();
        long max = maxWait.toMillis();
        // Shift at most 30 places: beyond that the cap is reached anyway and the long would overflow.
        long exponential = initial << Math.min(Math.max(retry - 1, 0), 30);
        return Math.min(max, exponential < 0 ? max : exponential);
    }

    /** A jittered wait before retry number {@code retry} (1-based): uniform in [0, cap]. */
    public Duration backoff(int retry) {
        long cap = backoffCapMillis(retry);
        return Duration.ofMillis(cap == 0 ? 0 : ThreadLocalRandom.current().nextLong(cap + 1));
    }
}
