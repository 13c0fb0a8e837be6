package io.tally.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    @Test
    void capDoublesFromTheInitialWaitUpToTheMaximum() {
        RetryPolicy p = new RetryPolicy(10, Duration.ofMillis(100), Duration.ofMillis(1000));
        assertThat(p.backoffCapMillis(1)).isEqualTo(100);
        assertThat(p.backoffCapMillis(2)).isEqualTo(200);
        assertThat(p.backoffCapMillis(3)).isEqualTo(400);
        assertThat(p.backoffCapMillis(4)).isEqualTo(800);
        assertThat(p.backoffCapMillis(5)).isEqualTo(1000);
        assertThat(p.backoffCapMillis(200)).isEqualTo(1000); // no overflow for absurd retry numbers
    }

    @Test
    void jitteredWaitStaysWithinTheCapAndVaries() {
        RetryPolicy p = new RetryPolicy(3, Duration.ofMillis(1000), Duration.ofMillis(20_000));
        java.util.Set<Long> distinct = new java.util.HashSet<>();
        for (int i = 0; i < 200; i++) {
            long wait = p.backoff(2).toMillis();
            assertThat(wait).isBetween(0L, 2000L);
            distinct.add(wait);
        }
        assertThat(distinct).hasSizeGreaterThan(50); // full jitter, not a fixed sleep
    }

    @Test
    void defaultsAreConfluents() {
        assertThat(RetryPolicy.DEFAULT.maxAttempts()).isEqualTo(4);
        assertThat(RetryPolicy.DEFAULT.initialWait()).isEqualTo(Duration.ofSeconds(1));
        assertThat(RetryPolicy.DEFAULT.maxWait()).isEqualTo(Duration.ofSeconds(20));
        assertThat(RetryPolicy.NONE.maxAttempts()).isEqualTo(1);
        assertThat(RetryPolicy.NONE.backoff(1)).isZero();
    }
}
