package io.tally.benchmarks;

import java.time.Duration;
import java.util.concurrent.Future;

/**
 * Samples a {@link PipelineRun} once a second while it works through its input, into time series of
 * {@link BenchResults}: events produced and aggregated per second, bucket updates consumed and documents
 * written per second, request units per second, 429s per second and both stages' backlog. Returns when
 * loadgen has finished and the pipeline has drained.
 */
final class PipelineSampler {
    private static final Duration PERIOD = Duration.ofSeconds(1);
    private static final int PROGRESS_EVERY = 10;

    /** Totals at the moment the pipeline was drained, counted from the sampler's start. */
    record Totals(double seconds, long events, double updatesConsumed, double documents, double requestUnits, double throttled,
                  double peakAggregationBacklog, double peakSinkLag) {}

    private final PipelineRun run;
    private final BenchResults results;
    private final String chartPrefix;

    /** @param chartPrefix names this scenario's charts, e.g. "a. throughput" */
    PipelineSampler(PipelineRun run, BenchResults results, String chartPrefix) {
        this.run = run;
        this.results = results;
        this.chartPrefix = chartPrefix;
    }

    Totals sampleUntilDrained(Future<?> producing, Duration timeout) throws Exception {
        long t0 = System.nanoTime();
        long deadline = t0 + timeout.toNanos();
        Sample start = sample();
        Sample last = start;
        double peakBacklog = 0;
        double peakLag = 0;
        int samples = 0;
        while (true) {
            Thread.sleep(PERIOD.toMillis());
            Sample now = sample();
            double t = (System.nanoTime() - t0) / 1e9;
            double dt = (now.nanos - last.nanos) / 1e9;
            results.point(chartPrefix + ": events per second", "produced", "events/s", t, (now.produced - last.produced) / dt);
            results.point(chartPrefix + ": events per second", "read by Kafka Streams (committed)", "events/s", t,
                    (now.aggregated - last.aggregated) / dt);
            results.point(chartPrefix + ": sink per second", "bucket updates consumed", "per s", t, (now.consumed - last.consumed) / dt);
            results.point(chartPrefix + ": sink per second", "documents written", "per s", t, (now.documents - last.documents) / dt);
            results.point(chartPrefix + ": request units per second", "sink RU/s", "RU/s", t, (now.requestUnits - last.requestUnits) / dt);
            results.point(chartPrefix + ": request units per second", "operations answered 429 (sink)", "per s", t, (now.throttled - last.throttled) / dt);
            double backlog = now.produced - now.aggregated;
            results.point(chartPrefix + ": backlog", "events not yet aggregated", "records", t, backlog);
            results.point(chartPrefix + ": backlog", "sink consumer lag (records-lag-max)", "records", t, now.sinkLag);
            peakBacklog = Math.max(peakBacklog, backlog);
            peakLag = Math.max(peakLag, now.sinkLag);
            last = now;
            String outstanding = producing.isDone() ? run.outstanding() : "loadgen still producing";
            if (++samples % PROGRESS_EVERY == 0) {
                System.out.printf(java.util.Locale.ROOT, "[%s] %.0f s: %,d events produced, %,d aggregated, %,.0f bucket updates consumed, "
                        + "%,.0f documents written; %s%n", run.name, t, now.produced, now.aggregated, now.consumed, now.documents,
                        outstanding == null ? "drained" : outstanding);
            }
            if (outstanding == null) {
                producing.get(); // rethrows a loadgen failure
                return new Totals((now.nanos - start.nanos) / 1e9, now.produced - start.produced, now.consumed - start.consumed,
                        now.documents - start.documents, now.requestUnits - start.requestUnits, now.throttled - start.throttled,
                        peakBacklog, peakLag);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(run.name + " did not drain within " + timeout + ": " + outstanding);
            }
        }
    }

    private record Sample(long nanos, long produced, long aggregated, double consumed, double documents, double requestUnits,
                          double throttled, double sinkLag) {}

    private Sample sample() throws Exception {
        long nanos = System.nanoTime();
        long produced = run.endOffsets(run.topics.transactions(), null);
        long aggregated = run.committed(run.applicationId, run.topics.transactions()).values().stream().mapToLong(Long::longValue).sum();
        return new Sample(nanos, produced, aggregated, run.sinkCounter("tally.sink.updates.consumed", null), run.documentsWritten(),
                run.requestUnits(), run.sinkCounter("tally.sink.throttled", null), run.sinkGauge("tally.sink.consumer.lag"));
    }
}
