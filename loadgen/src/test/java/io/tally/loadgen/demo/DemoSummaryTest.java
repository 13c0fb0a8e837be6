package io.tally.loadgen.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.loadgen.truth.GroundTruthFile;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class DemoSummaryTest {
    static final GroundTruthFile.Figures TRUTH = new GroundTruthFile.Figures(true, 4_210,
            ordered("VALID", 4_000L, "DUPLICATE", 120L, "LATE", 40L, "MALFORMED", 50L), 3_998, 122, 2_345, 92,
            ordered("DECODE_FAILED", 50L, "INVALID", 2L, "LATE", 40L, "FUTURE", 0L));
    static final Progress PROGRESS = new Progress(4_210, 0, 3_700, 92, 3_700, 2_360, 5, 0, 31_234, 57, 0, 0);

    @Test
    void printsTheRunsFiguresBesideTheGroundTruth() {
        String out = print(new DemoSummary(75, 21, OptionalLong.of(6), PROGRESS, 6_012, TRUTH, ".tally/loadgen/demo-ground-truth.json"));

        assertThat(out).isEqualTo("""

                ==> 5/5 summary
                  elapsed          75 s: loadgen ran 21 s, the pipeline drained 6 s after it
                  produced         4,210 events: VALID 4000 DUPLICATE 120 LATE 40 MALFORMED 50
                  ingested         4,210 read by the aggregation
                  accepted         3,998 counted once, 122 duplicates dropped (ground truth)
                  DLQ              92 written to transactions.dlq; ground truth 92 (DECODE_FAILED 50, INVALID 2, LATE 40, FUTURE 0)
                  bucket updates   3,700 emitted by the aggregation, 3,700 read by the sink
                  buckets written  2,360 document writes for 2,345 buckets (ground truth); 5 stale, 0 dead-lettered
                  request units    31,234 RU, peak 6,012 RU/s; 57 operations answered 429 and were retried
                  ground truth     .tally/loadgen/demo-ground-truth.json
                """);
    }

    @Test
    void saysWhenThePipelineHadNotDrained() {
        String out = print(new DemoSummary(250, 21, OptionalLong.empty(), PROGRESS, 6_012, TRUTH, "t.json"));

        assertThat(out).contains("  elapsed          250 s: loadgen ran 21 s, the pipeline had not drained\n");
    }

    private static String print(DemoSummary summary) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        summary.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    }

    private static Map<String, Long> ordered(Object... keysAndValues) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) m.put((String) keysAndValues[i], (Long) keysAndValues[i + 1]);
        return m;
    }
}
