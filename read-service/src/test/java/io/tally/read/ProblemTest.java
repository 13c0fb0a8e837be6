package io.tally.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class ProblemTest {
    @Test
    void retryAfterIsWholeSecondsRoundedUpAndNeverZero() {
        assertThat(Problem.retryAfterSeconds(null)).isEqualTo(1);
        assertThat(Problem.retryAfterSeconds(Duration.ZERO)).isEqualTo(1);
        assertThat(Problem.retryAfterSeconds(Duration.ofMillis(1))).isEqualTo(1);
        assertThat(Problem.retryAfterSeconds(Duration.ofMillis(1000))).isEqualTo(1);
        assertThat(Problem.retryAfterSeconds(Duration.ofMillis(1001))).isEqualTo(2);
    }

    @Test
    void timeoutsAre504AndUnknownFailuresAre500WithoutTheirMessage() {
        assertThat(Problem.from(new TimeoutException("x"), "t").status).isEqualTo(504);
        Problem p = Problem.from(new IllegalStateException("secret internals at db-host-7"), "t");
        assertThat(p.status).isEqualTo(500);
        assertThat(p.body(null).toString()).doesNotContain("db-host-7");
    }
}
