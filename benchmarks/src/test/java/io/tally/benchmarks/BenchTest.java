package io.tally.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class BenchTest {

    /** ./tally bench runs the set from what --set prints on stdout: the names, one a line, and nothing else. */
    @Test
    void setPrintsTheEndToEndSetInOrderAndNothingElse() throws Exception {
        Result r = bench("--set");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out().lines().toList()).containsExactly("end-to-end", "freshness-cost", "sink-latency", "read-latency", "scale-out");
        assertThat(BenchReport.END_TO_END_SET.keySet()).as("the report's order").containsExactlyElementsOf(r.out().lines().toList());
    }

    @Test
    void anUnknownNameIsAUsageErrorThatNamesEveryBenchmark() throws Exception {
        Result r = bench("end-too-end", "--quick");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).startsWith("unknown benchmark 'end-too-end' (one of: end-to-end, freshness-cost, sink-latency, read-latency, "
                + "scale-out, backfill, report, local-cosmos, loadgen, aggregation, sink, sink-heap, read-cost, read-service)").contains("Usage: ");
        assertThat(r.out()).isEmpty();

        Result none = bench();
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).startsWith("no benchmark named (one of: end-to-end,");
    }

    @Test
    void helpListsTheSetTheReportAndTheSingleStageBenchmarks() throws Exception {
        Result r = bench("--help");
        assertThat(r.exit()).isZero();
        String set = section(r.out(), "The end-to-end set");
        String stages = section(r.out(), "Single-stage benchmarks");
        for (Bench.Benchmark b : Bench.ALL) {
            String listed = switch (b.kind()) {
                case SET -> set;
                case ALONE -> section(r.out(), "Run only when named");
                case REPORT -> section(r.out(), "The report");
                case STAGE -> stages;
            };
            assertThat(listed).as(b.name()).containsPattern("(?m)^  " + Pattern.quote(b.name()) + " +" + Pattern.quote(b.title()) + "$");
        }
    }

    /** The launcher answers help and unknown names without a build, from its own list: it must be this one. */
    @Test
    void theLauncherKnowsTheSameNames() throws IOException {
        String tally = Files.readString(Path.of("..", "tally"));
        Matcher m = Pattern.compile("(?m)^BENCHES=\"([^\"]*)\"$").matcher(tally);
        assertThat(m.find()).as("BENCHES=\"...\" in ./tally").isTrue();
        assertThat(Arrays.asList(m.group(1).split(" "))).containsExactlyElementsOf(Bench.ALL.stream().map(Bench.Benchmark::name).toList());
    }

    /** The text from {@code heading} to the next blank line. */
    private static String section(String text, String heading) {
        int start = text.indexOf("\n" + heading);
        assertThat(start).as("a section '%s' in%n%s", heading, text).isNotNegative();
        int end = text.indexOf("\n\n", start + 1);
        return text.substring(start + 1, end < 0 ? text.length() : end);
    }

    private record Result(int exit, String out, String err) {}

    /** Bench's main in a JVM of its own: it ends the JVM on a usage error. */
    private static Result bench(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
                "-cp", System.getProperty("java.class.path"), Bench.class.getName()));
        cmd.addAll(List.of(args));
        Path err = Files.createTempFile("bench-test", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            return new Result(p.exitValue(), out, Files.readString(err));
        } finally {
            Files.deleteIfExists(err);
        }
    }
}
