package io.tally.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateScheduleTest {
    // 10/s, then 10x for 2 s starting at 1 s.
    final RateSchedule s = new RateSchedule(10, 10, Duration.ofSeconds(1), Duration.ofSeconds(2));

    @Test
    void spacesRecordsByTheRateAndCompressesTheBurst() {
        assertThat(s.dueNanos(0)).isZero();
        assertThat(s.dueNanos(5)).isEqualTo(500_000_000L);         // 10/s before the burst
        assertThat(s.dueNanos(10)).isEqualTo(1_000_000_000L);      // the burst starts at 1 s
        assertThat(s.dueNanos(60)).isEqualTo(1_500_000_000L);      // 100/s: 50 records in 0.5 s
        assertThat(s.dueNanos(210)).isEqualTo(3_000_000_000L);     // 10 + 200 records by 3 s, then 10/s again
        assertThat(s.dueNanos(220)).isEqualTo(4_000_000_000L);
    }

    @Test
    void countsWhatFitsInADuration() {
        assertThat(s.recordsWithin(Duration.ofSeconds(1))).isEqualTo(10);
        assertThat(s.recordsWithin(Duration.ofSeconds(2))).isEqualTo(110);
        assertThat(s.recordsWithin(Duration.ofSeconds(5))).isEqualTo(230);
        assertThat(new RateSchedule(0, 1, Duration.ZERO, Duration.ZERO).unpaced()).isTrue();
    }
}
