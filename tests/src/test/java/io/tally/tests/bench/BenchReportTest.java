package io.tally.tests.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchReportTest {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    @Test
    void rendersFiguresNotesAndPlotsOfEveryDataFile(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("benchmarks/data");
        Path stages = dir.resolve("benchmarks");
        new BenchResults(EndToEndBench.NAME, "End to end", "./tally bench end-to-end --quick")
                .figure("a. throughput", "end-to-end throughput", 1234.5, "events/s")
                .figure("b. freshness", "p99", 0.0421, "ms")
                .note("a note under the table")
                .point("a. throughput: events per second", "produced", "events/s", 0, 10)
                .point("a. throughput: events per second", "produced", "events/s", 1, 30)
                .point("a. throughput: events per second", "429 answers/s", "per s", 1, 2)
                .write(data);
        Files.writeString(stages.resolve("sink.md"), "# Sink benchmark\n\ntext\n");
        Files.createDirectories(dir.resolve("benchmarks/plots"));
        Files.write(dir.resolve("benchmarks/plots/end-to-end-gone.png"), new byte[] {1});

        Path md = new BenchReport(data, dir.resolve("benchmarks.md"), dir.resolve("benchmarks/plots"), stages).write();

        String page = Files.readString(md);
        assertThat(page).contains("## End to end", "Command: `./tally bench end-to-end --quick`", "| a. throughput | end-to-end throughput | 1,235 | events/s |",
                "| b. freshness | p99 | 0.0421 | ms |", "- a note under the table", "Machine: ",
                "![a. throughput: events per second](benchmarks/plots/end-to-end-a-throughput-events-per-second.png)");
        assertThat(page).as("benchmarks of the set without data").contains("Not run yet. Command: `./tally bench scale-out`",
                "Not run yet. Command: `./tally bench read-latency`");
        assertThat(page).as("older per-stage pages").contains("- [Sink benchmark](benchmarks/sink.md) (`./tally bench sink`)");
        Path png = dir.resolve("benchmarks/plots/end-to-end-a-throughput-events-per-second.png");
        byte[] head = new byte[PNG_SIGNATURE.length];
        System.arraycopy(Files.readAllBytes(png), 0, head, 0, head.length);
        assertThat(head).isEqualTo(PNG_SIGNATURE);
        assertThat(dir.resolve("benchmarks/plots/end-to-end-gone.png")).as("plots of an older run are replaced").doesNotExist();
    }

    @Test
    void numbersKeepThreeSignificantDigitsAndGroupThousands() {
        assertThat(BenchReport.number(1234567.8)).isEqualTo("1,234,568");
        assertThat(BenchReport.number(42.0)).isEqualTo("42");
        assertThat(BenchReport.number(12.345)).isEqualTo("12.3");
        assertThat(BenchReport.number(1.2345)).isEqualTo("1.23");
        assertThat(BenchReport.number(0.012345)).isEqualTo("0.0123");
    }
}
