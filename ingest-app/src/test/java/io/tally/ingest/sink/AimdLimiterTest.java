package io.tally.ingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class AimdLimiterTest {

    @Test
    void halvesOnCongestionOncePerCooldownAndGrowsByOnePerLimitCleanCalls() {
        AimdLimiter l = new AimdLimiter(8, 1, 10, Duration.ofHours(1).toNanos());
        for (int i = 0; i < 3; i++) l.acquire().block();
        l.release(true);
        l.release(true); // same burst: inside the cooldown, no second cut
        assertThat(l.limit()).isEqualTo(4);
        l.release(false);
        for (int i = 0; i < 4; i++) {
            l.acquire().block();
            l.release(false);
        }
        assertThat(l.limit()).isEqualTo(5);
    }

    @Test
    void aWaiterGetsThePermitWhenOneIsReleased() {
        AimdLimiter l = new AimdLimiter(1, 1, 1, 0);
        l.acquire().block();
        AtomicBoolean got = new AtomicBoolean();
        l.acquire().subscribe(v -> {}, e -> {}, () -> got.set(true));
        assertThat(got).isFalse();
        l.release(false);
        assertThat(got).isTrue();
        assertThat(l.inUse()).isEqualTo(1);
    }

    @Test
    void neverBelowTheFloor() {
        AimdLimiter l = new AimdLimiter(2, 2, 4, 0);
        l.acquire().block();
        l.release(true);
        assertThat(l.limit()).isEqualTo(2);
    }
}
