package io.tally.ingest.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ReplayProgressTest {
    final AtomicLong clock = new AtomicLong();
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    private ReplayProgress progress(boolean terminal) {
        return new ReplayProgress(new PrintStream(bytes, true, StandardCharsets.UTF_8), terminal, Duration.ofSeconds(2), clock::get);
    }

    @Test
    void aLineAtMostPerIntervalWithPercentRateAndEta() {
        ReplayProgress p = progress(false);
        p.start("reading", 1000);
        clock.set(Duration.ofSeconds(1).toNanos());
        p.update(100);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).as("within the interval").isEmpty();
        clock.set(Duration.ofSeconds(10).toNanos());
        p.update(250);
        assertThat(bytes.toString(StandardCharsets.UTF_8))
                .isEqualTo("replay reading: 250 / 1,000 ( 25.0%) 25/s ETA 0:00:30, elapsed 0:00:10" + System.lineSeparator());
    }

    @Test
    void aTerminalGetsOneRedrawnLineWithABar() {
        ReplayProgress p = progress(true);
        p.start("writing", 4);
        clock.set(Duration.ofSeconds(3).toNanos());
        p.update(2);
        p.finish(4);
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(out).startsWith("\r[" + "#".repeat(15) + ".".repeat(15) + "] replay writing: 2 / 4");
        assertThat(out).contains("\r[" + "#".repeat(30) + "] replay writing: 4 / 4 (100.0%)").contains("done").endsWith(System.lineSeparator());
    }
}
