package io.tally.ingest.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LiveFirstPaceTest {
    private static final long MS = 1_000_000L;

    private static LiveFirstPace pace() {
        return new LiveFirstPace(3200, Duration.ofMillis(500), Duration.ofSeconds(1));
    }

    @Test
    void startsAtAQuarterAndGrowsToTheMaximumWhileTheLiveRunKeepsUp() {
        LiveFirstPace p = pace();
        assertThat(p.rate()).isEqualTo(800);
        long ends = 0;
        for (int i = 0; i < 20; i++) {
            ends += 50; // 100 records/s, committed 10 records behind: 0.1 s
            p.observe(i * 500 * MS, ends, ends - 10);
        }
        assertThat(p.lagSeconds()).isCloseTo(0.1, org.assertj.core.data.Offset.offset(0.01));
        assertThat(p.rate()).isEqualTo(3200);
    }

    @Test
    void halvesWhileTheLiveRunIsBehindAtMostOncePerCooldownAndNeverBelowAThirtySecond() {
        LiveFirstPace p = pace();
        long ends = 0;
        for (int i = 0; i < 20; i++) p.observe(i * 500 * MS, ends += 50, ends - 10);
        assertThat(p.rate()).isEqualTo(3200);
        p.observe(10_000 * MS, ends += 50, ends - 100); // 1 s behind
        assertThat(p.rate()).isEqualTo(1600);
        p.observe(10_500 * MS, ends += 50, ends - 100);
        assertThat(p.rate()).as("within the cooldown: the lag has not answered the cut yet").isEqualTo(1600);
        for (int i = 0; i < 20; i++) p.observe(11_000 * MS + i * 1000 * MS, ends += 100, ends - 200);
        assertThat(p.rate()).isEqualTo(100);
        p.observe(31_000 * MS, ends += 100, ends - 5);
        assertThat(p.rate()).as("caught up: grows back by a sixteenth").isEqualTo(300);
    }

    @Test
    void anIdleInputCannotBeCrowdedOutSoTheRateGrows() {
        LiveFirstPace p = pace();
        for (int i = 0; i < 20; i++) p.observe(i * 500 * MS, 1_000, 990); // no new records: 10 markers or records behind say nothing
        assertThat(p.lagSeconds()).isZero();
        assertThat(p.rate()).isEqualTo(3200);
    }

    @Test
    void aMaximumIsNeeded() {
        assertThatThrownBy(() -> new LiveFirstPace(0, Duration.ofMillis(500), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
