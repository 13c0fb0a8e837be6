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

    @Test
    void belowTheFloorEveryCleanCallDoublesTheLimitUpToIt() {
        java.util.concurrent.atomic.AtomicInteger floor = new java.util.concurrent.atomic.AtomicInteger(12);
        AimdLimiter l = new AimdLimiter(4, 1, 32, 0, limit -> floor.get(), 0);
        cleanCall(l);
        assertThat(l.limit()).isEqualTo(8);
        cleanCall(l);
        assertThat(l.limit()).as("up to the floor, not past it").isEqualTo(12);
        floor.set(40);
        cleanCall(l);
        cleanCall(l);
        assertThat(l.limit()).as("never above the ceiling").isEqualTo(32);
        floor.set(2);
        cleanCall(l);
        assertThat(l.limit()).as("a lower floor does not pull the limit down").isEqualTo(32);
    }

    private static void cleanCall(AimdLimiter l) {
        l.acquire().block();
        l.release(false);
    }

    @Test
    void congestionStillHalvesAndHoldsTheFloorOffForAWhile() {
        AimdLimiter l = new AimdLimiter(16, 1, 32, 0, limit -> 16, Duration.ofHours(1).toNanos());
        l.acquire().block();
        l.release(true);
        assertThat(l.limit()).isEqualTo(8);
        l.acquire().block();
        l.release(false);
        assertThat(l.limit()).as("throttled within the hold-off: AIMD alone").isEqualTo(8);
        for (int i = 0; i < 8; i++) {
            l.acquire().block();
            l.release(false);
        }
        assertThat(l.limit()).isEqualTo(9);
    }

    @Test
    void theFloorWakesWaitersAtOnce() {
        AimdLimiter l = new AimdLimiter(1, 1, 8, 0, limit -> 3, 0);
        l.acquire().block();
        AtomicBoolean second = new AtomicBoolean();
        AtomicBoolean third = new AtomicBoolean();
        l.acquire().subscribe(v -> {}, e -> {}, () -> second.set(true));
        l.acquire().subscribe(v -> {}, e -> {}, () -> third.set(true));
        l.release(false);
        assertThat(second).isTrue();
        assertThat(third).isTrue();
        assertThat(l.inUse()).isEqualTo(2);
    }
}
