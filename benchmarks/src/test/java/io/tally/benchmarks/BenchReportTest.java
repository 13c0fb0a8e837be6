package io.tally.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
    void marksAResultTakenAboveOneRunnableProcessPerCoreAsNoisy(@TempDir Path dir) throws Exception {
        ObjectMapper json = new ObjectMapper();
        ObjectNode quiet = json.createObjectNode().put("cores", 2).put("loadAverageBefore", 0.5).put("loadAverageMean", 1.9)
                .put("loadAverageMax", 2.6).put("loadAverageSamples", 12);
        quiet.putObject("cosmosLoopDelay").put("p50Ms", 0.4).put("p99Ms", 12.25).put("maxMs", 80).put("requests", 91234);
        assertThat(BenchReport.noisy(quiet)).isFalse();
        assertThat(BenchReport.load(quiet)).isEqualTo("Load average (1 min): 0.50 before the run, mean 1.90 / max 2.60 during it, on 2 cores; "
                + "local Cosmos endpoint's event-loop delay p50 0.4 ms, p99 12.3 ms, max 80 ms over 91,234 requests.");

        ObjectNode busyBefore = quiet.deepCopy().put("loadAverageBefore", 2.5);
        ObjectNode busyDuring = quiet.deepCopy().put("loadAverageMean", 3.1);
        ObjectNode older = json.createObjectNode().put("cores", 2).put("loadAverageStart", 23.31).put("loadAverageEnd", 16.76);
        for (ObjectNode m : List.of(busyBefore, busyDuring, older)) {
            assertThat(BenchReport.noisy(m)).as(m.toString()).isTrue();
            assertThat(BenchReport.load(m)).as(m.toString()).contains("**NOISY**: above one runnable process per core");
        }

        Path data = dir.resolve("data");
        Files.createDirectories(data);
        ObjectNode result = json.createObjectNode().put("name", "scale-out").put("title", "Scale-out").put("command", "./tally bench scale-out")
                .put("ranAt", "2026-01-01T00:00:00Z");
        result.set("machine", busyDuring);
        json.writeValue(data.resolve("scale-out.json").toFile(), result);
        String page = Files.readString(new BenchReport(data, dir.resolve("benchmarks.md"), dir.resolve("plots"), null).write());
        assertThat(page).contains("| [Scale-out](#bench-scale-out) | 2026-01-01T00:00:00Z (NOISY) |", "mean 3.10 / max 2.60 during it");
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
