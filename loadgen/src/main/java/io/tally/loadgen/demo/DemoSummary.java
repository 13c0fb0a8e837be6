package io.tally.loadgen.demo;

import static io.tally.loadgen.demo.ProgressLine.group;

import io.tally.loadgen.truth.GroundTruthFile;
import java.io.PrintStream;
import java.util.OptionalLong;
import java.util.stream.Collectors;

/**
 * The demo's summary once the pipeline has drained (or the wait for it gave up): what the pipeline's
 * metrics counted for this run beside what loadgen's ground truth says it must count.
 *
 * @param elapsedSeconds the demo's whole run so far
 * @param loadgenSeconds how long loadgen ran
 * @param drainedSeconds how long after loadgen the pipeline drained; empty when it had not
 * @param peakRuPerSecond the highest RU/s of the live lines
 * @param truthShown     the ground-truth file as the reader should see its path
 */
record DemoSummary(long elapsedSeconds, long loadgenSeconds, OptionalLong drainedSeconds, Progress progress,
                   long peakRuPerSecond, GroundTruthFile.Figures truth, String truthShown) {

    void print(PrintStream out) {
        Progress p = progress;
        String drained = drainedSeconds.isPresent() ? "the pipeline drained " + drainedSeconds.getAsLong() + " s after it"
                : "the pipeline had not drained";
        String kinds = truth.acknowledgedByKind().entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(" "));
        String dlqReasons = truth.dlq().entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
        out.println();
        out.println("==> 5/5 summary");
        out.printf("  elapsed          %d s: loadgen ran %d s, %s%n", elapsedSeconds, loadgenSeconds, drained);
        out.printf("  produced         %s events: %s%n", group(truth.acknowledged()), kinds);
        out.printf("  ingested         %s read by the aggregation%n", group(p.ingested()));
        out.printf("  accepted         %s counted once, %s duplicates dropped (ground truth)%n", group(truth.accepted()),
                group(truth.duplicates()));
        out.printf("  DLQ              %s written to transactions.dlq; ground truth %s (%s)%n", group(p.dlq()),
                group(truth.dlqTotal()), dlqReasons);
        out.printf("  bucket updates   %s emitted by the aggregation, %s read by the sink%n", group(p.emitted()), group(p.updates()));
        out.printf("  buckets written  %s document writes for %s buckets (ground truth); %s stale, %s dead-lettered%n",
                group(p.docs()), group(truth.documents()), group(p.stale()), group(p.docsDlq()));
        out.printf("  request units    %s RU, peak %s RU/s; %s operations answered 429 and were retried%n", group(p.ru()),
                group(peakRuPerSecond), group(p.throttled()));
        out.printf("  ground truth     %s%n", truthShown);
        out.flush();
    }
}
