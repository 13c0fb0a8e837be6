package io.tally.benchmarks;

import com.azure.cosmos.CosmosAsyncContainer;
import io.tally.ingest.freshness.FreshnessTarget;
import io.tally.ingest.replay.ReplayJob;
import io.tally.ingest.replay.ReplayReport;
import io.tally.ingest.replay.ReplaySettings;
import io.tally.ingest.rules.BackfillJob;
import io.tally.ingest.rules.BackfillSettings;
import io.tally.ingest.rules.RulesApplyCommand;
import io.tally.loadgen.rules.RuleSet;
import io.tally.loadgen.truth.BucketValue;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesStateStore;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import io.tally.testsupport.truth.GroundTruthJudge;
import io.tally.testsupport.truth.GroundTruthJudge.Verdict;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What a rules change costs: backfilling one new grade against rebuilding every grade into a new container, on the same
 * retained input, and live freshness while the backfill runs. Writes docs/benchmarks/data/backfill.json.
 *
 * <ol>
 *   <li>A pipeline on the default rules (v1) ingests a backlog: loadgen's defaults without malformed records, event
 *       times over a few hours of yesterday, drained.
 *   <li>v2 = v1 plus {@value #NEW_RULE} (customerId, count, day, P35D) is applied ({@code ./tally rules apply}); the
 *       running ingest-app sees it and stops by itself, and starts again on v2 (same state, application id, sink).
 *   <li>Once past the seam, a live rate flows (loadgen, event times now) with the freshness probe: the live rate alone is
 *       measured (the sink's request units and documents per second, freshness), then the backfill
 *       ({@code ./tally rules backfill}) runs to its end and its deltas are written, the live rate still flowing. What the
 *       backfill cost is what the sink spent in that window beyond the live rate's own rate.
 *   <li>The live load stops, the pipeline drains, and every bucket of the live container is judged against the ground
 *       truth of all the input under v2 (across the two rules generations).
 *   <li>The full rebuild: {@code ./tally replay} of every v2 grade over the backlog's day into a new container, with
 *       nothing else writing; its own request-unit count and wall time; judged against the same truth, that day only.
 * </ol>
 *
 * Both operations count the same retained input, the backlog: the backfill every record before the seam (it reads the
 * live ones up to its own start too, and skips them), the rebuild every record inside its range (the live ones are
 * today's).
 *
 * <pre>./tally bench backfill [--quick] [--events=N] [--rate=N] [--with=KEY=VALUE...]</pre>
 * (--quick: 10,000 events over 2 hours, 100 live events/s, a 15 s live window; default 50,000 events over 4 hours,
 * 150 live events/s, 30 s. --with: a setting of the backfill job other than its default, backfill.* or ingest-app's,
 * e.g. --with=ingest.commit-interval.ms=5000, named in the report's command line.)
 */
public final class BackfillBench {
    static final String NAME = "backfill";
    static final String NEW_RULE = "orders-per-customer";
    /** v2's one new grade, as a user adds it at the end of the shipped file. */
    static final String NEW_RULE_YAML = """

              - name: orders-per-customer
                entity: customerId
                value: one
                aggregations: [count]
                units: [day]
                retention: P35D
            """;
    /**
     * The seam is at least their sum after the apply: kept short as RulesChangeIT keeps them, so the bench waits seconds
     * for it, not minutes. Loadgen gets the same future skew, so its truth classifies FUTURE events as the pipeline does.
     */
    private static final long FUTURE_SKEW_MS = 20_000;
    private static final String[] SEAM_SETTINGS = {"--ingest.max-future-skew.ms=" + FUTURE_SKEW_MS,
            "--ingest.rules.watch-interval.ms=1000", "--ingest.rules.switch-margin.ms=2000"};
    private static final Duration END_MARGIN = Duration.ofSeconds(2);
    private static final int PROBE_PER_SECOND = 20;
    /**
     * The live rate comes in pieces this long, one loadgen run each with its own seed (so transaction ids never repeat):
     * a loadgen run has a planned end, and how long the backfill takes is what is measured. Shorter than the future
     * skew, so no live event runs further ahead of its record than the pipeline allows.
     */
    private static final Duration LIVE_PIECE = Duration.ofSeconds(10);
    private static final String REBUILD_CONTAINER = "rebuild";
    private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(10);
    private static final String RU_CHART = "live container: sink request units per second";
    private static final String FRESHNESS_CHART = "live freshness (produced -> served by read-service)";

    private record Size(long backlog, Duration span, int liveRate, Duration settle, Duration baseline) {}

    private final Size size;
    /** The backfill job's settings beyond the bench's own, as {@code --key=value} (from {@code --with=key=value}). */
    private final String[] backfillSettings;
    private final TestKafka kafka;
    private final String registry;
    private final LocalCosmos cosmos;
    private final BenchResults results;
    private final ExecutorService background = Executors.newCachedThreadPool(r -> new Thread(r, CpuByPart.HARNESS_PREFIX + "live-load"));

    private BackfillBench(boolean quick, Size size, Size defaults, String[] backfillSettings) {
        this.size = size;
        this.backfillSettings = backfillSettings;
        this.kafka = TestKafka.get();
        this.registry = LocalSchemaRegistry.get().url();
        // A private endpoint: its request counters must be this run's alone.
        this.cosmos = LocalCosmos.startPrivate();
        BenchRun.begin(NAME).cosmos(cosmos.control());
        this.results = new BenchResults(NAME, "Rules change: backfilling one new grade against a full rebuild, and live freshness meanwhile",
                "./tally bench " + NAME + (quick ? " --quick" : "") + (size.backlog != defaults.backlog ? " --events=" + size.backlog : "")
                        + (size.liveRate != defaults.liveRate ? " --rate=" + size.liveRate : "")
                        + Arrays.stream(backfillSettings).map(a -> " --with=" + a.substring(2)).collect(java.util.stream.Collectors.joining()));
    }

    public static void main(String[] args) throws Exception {
        BenchRun.begin(NAME);
        boolean quick = Arrays.asList(args).contains("--quick");
        Size defaults = quick ? new Size(10_000, Duration.ofHours(2), 100, Duration.ofSeconds(5), Duration.ofSeconds(15))
                : new Size(50_000, Duration.ofHours(4), 150, Duration.ofSeconds(10), Duration.ofSeconds(30));
        long events = Arrays.stream(args).filter(a -> a.startsWith("--events=")).map(a -> Long.parseLong(a.substring(9)))
                .findFirst().orElse(defaults.backlog);
        int rate = Arrays.stream(args).filter(a -> a.startsWith("--rate=")).map(a -> Integer.parseInt(a.substring(7)))
                .findFirst().orElse(defaults.liveRate);
        String[] backfillSettings = Arrays.stream(args).filter(a -> a.startsWith("--with=")).map(a -> "--" + a.substring(7)).toArray(String[]::new);
        EndToEndBench.quietLibraries();
        try {
            new BackfillBench(quick, new Size(events, defaults.span, rate, defaults.settle, defaults.baseline), defaults, backfillSettings).run();
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    /** v2: the rules file {@code v1} with {@link #NEW_RULE_YAML} added at its end. */
    static String v2(String v1) {
        return v1.stripTrailing() + "\n" + NEW_RULE_YAML;
    }

    private void run() throws Exception {
        Path dir = Files.createTempDirectory("bench-backfill");
        Path v2 = Files.writeString(dir.resolve("rules-v2.yaml"), v2(GradeRules.text(GradeRules.BUILTIN_DEFAULT)));
        Instant day = Instant.now().truncatedTo(ChronoUnit.DAYS).minus(Duration.ofDays(1));
        results.note(String.format(Locale.ROOT, "All in one JVM on the local stack: broker %s, a private local Cosmos endpoint (Node, one "
                + "thread; RU are its RU model, local/cosmos/README.md), ingest-app with both roles and read-service at their defaults "
                + "but for the seam's parts (ingest.max-future-skew.ms=%d, ingest.rules.watch-interval.ms=1000, "
                + "ingest.rules.switch-margin.ms=2000, as RulesChangeIT: the seam %d s after the apply instead of 5 minutes).",
                kafka.origin(), FUTURE_SKEW_MS, (FUTURE_SKEW_MS + 3000) / 1000));
        results.note(String.format(Locale.ROOT, "Backlog: %,d records by loadgen (its defaults, Zipf over 10,000 customers and 500 SKUs, 1%% "
                + "duplicates, ~0.3%% late, future or invalid records, no malformed ones) with event times over %d hours of %s, "
                + "ingested under the default rules (v1, 4 rules, 5 grades) and drained. v2 = v1 plus %s (customerId, count, day, "
                + "P35D): one grade added.", size.backlog, size.span.toHours(), day.toString().substring(0, 10), NEW_RULE));
        try (PipelineRun run = new PipelineRun("bf", kafka, registry, cosmos, null, SEAM_SETTINGS).start()) {
            backlog(run, day.plus(Duration.ofHours(8)), v2);
            Applied applied = apply(run, v2);
            try (Timeline timeline = new Timeline(run)) {
                Live live = liveAndBackfill(run, timeline, dir, v2, applied);
                GroundTruth truth = truth(run, v2);
                judgeLive(run, truth, applied);
                Rebuild rebuild = rebuild(run, timeline, v2, day, truth);
                compare(live, rebuild);
            }
        } catch (Exception e) {
            results.note("This run stopped early: " + e);
            progress("wrote %s (incomplete)", results.write());
            throw e;
        }
        progress("wrote %s", results.write());
        background.shutdownNow();
    }

    // --- 1. the backlog under v1 ---------------------------------------------------------------------

    private void backlog(PipelineRun run, Instant start, Path v2) throws Exception {
        progress("backlog: %,d records, event times from %s over %d h, under the default rules", size.backlog, start, size.span.toHours());
        long t0 = System.nanoTime();
        run.produce(size.backlog, "--loadgen.start=" + start, "--loadgen.window.ms=" + size.span.toMillis(),
                "--loadgen.malformed.fraction=0", "--loadgen.future-skew.ms=" + FUTURE_SKEW_MS, "--loadgen.rules-file=" + v2);
        awaitDrained(run, "the backlog");
        double seconds = (System.nanoTime() - t0) / 1e9;
        results.figure("backlog (v1)", "records", size.backlog, "records")
                .figure("backlog (v1)", "ingested and written in", seconds, "s")
                .figure("backlog (v1)", "sink request units", run.requestUnits(), "RU")
                .figure("backlog (v1)", "documents written", run.documentsWritten(), "documents");
        progress("backlog: drained in %.1f s, %,.0f RU, %,.0f documents written", seconds, run.requestUnits(), run.documentsWritten());
    }

    private static void awaitDrained(PipelineRun run, String what) throws Exception {
        run.newDrainTargets();
        long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
        String behind;
        while ((behind = run.outstanding()) != null) {
            if (System.nanoTime() > deadline) throw new IllegalStateException(what + " not written within " + DRAIN_TIMEOUT + ": " + behind);
            Thread.sleep(200);
        }
    }

    // --- 2. the apply, and ingest-app moving to v2 ---------------------------------------------------

    /** What the apply recorded: the generation, the seam, and each grade's {@code since} (for the judge). */
    private record Applied(long generation, Instant seam, Map<String, Long> since) {}

    private Applied apply(PipelineRun run, Path v2) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        int exit = RulesApplyCommand.run(run.commandFlags(v2.toString()).toArray(String[]::new), Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        out.toString(StandardCharsets.UTF_8).lines().forEach(l -> progress("  %s", l));
        if (exit != RulesApplyCommand.EXIT_APPLIED) {
            throw new IllegalStateException("./tally rules apply exited " + exit + ": " + err.toString(StandardCharsets.UTF_8));
        }
        RulesState state = new RulesStateStore(run.container()).read().orElseThrow().state();
        List<RulesState.Grade> pending = state.grades().stream().filter(g -> !g.complete()).toList();
        if (pending.size() != 1 || !pending.get(0).rule().equals(NEW_RULE)) {
            throw new IllegalStateException("expected one pending grade, " + NEW_RULE + "/day; the record has " + pending);
        }
        Map<String, Long> since = new TreeMap<>();
        state.grades().forEach(g -> since.put(g.grade(), g.since()));

        // The running instance reads the record every watch interval and stops by itself on a newer generation, as a run
        // that failed: its process would exit non-zero for the supervisor to start it again.
        if (!background.submit(run.ingest()::awaitStopped).get(60, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException("ingest-app on v1 stopped, but not as a run that failed on a newer rules generation");
        }
        double stoppedAfter = (System.nanoTime() - t0) / 1e9; // from the apply's start
        run.restartIngest(v2.toString());
        progress("generation %d applied, seam %s; ingest-app stopped by itself %.1f s after the apply and started again on v2",
                state.generation(), pending.get(0).countingFrom(), stoppedAfter);
        results.figure("the apply", "ingest-app on v1 stopped by itself after", stoppedAfter, "s");
        return new Applied(state.generation(), pending.get(0).countingFrom(), since);
    }

    // --- 3. the live rate, alone and beside the backfill ---------------------------------------------

    /** The live container's sink counters and the load average, sampled every second from ingest-app's start on v2. */
    private static final class Timeline implements AutoCloseable {
        record Sample(long nanos, double requestUnits, double documents, double load) {}

        private final PipelineRun run;
        private final long start = System.nanoTime();
        private final List<Sample> samples = new ArrayList<>();
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "backfill-bench-timeline");
            t.setDaemon(true);
            return t;
        });

        Timeline(PipelineRun run) {
            this.run = run;
            timer.scheduleAtFixedRate(this::now, 0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }

        synchronized Sample now() {
            Sample s = new Sample(System.nanoTime(), run.requestUnits(), run.documentsWritten(), BenchRun.loadAverage());
            samples.add(s);
            return s;
        }

        double seconds(long nanos) {
            return (nanos - start) / 1e9;
        }

        /** Mean and maximum of the 1-minute load average sampled in [from, to]. */
        synchronized double[] load(long from, long to) {
            double sum = 0, max = 0;
            int n = 0;
            for (Sample s : samples) {
                if (s.nanos < from || s.nanos > to) continue;
                sum += s.load;
                max = Math.max(max, s.load);
                n++;
            }
            return new double[] {n == 0 ? Double.NaN : sum / n, max};
        }

        /** The sink's request units per second between consecutive samples in [from, to], as {@code series} of the RU chart. */
        synchronized void plot(BenchResults results, String series, long from, long to) {
            Sample previous = null;
            for (Sample s : samples) {
                if (s.nanos < from || s.nanos > to) continue;
                if (previous != null && s.nanos > previous.nanos) {
                    results.point(RU_CHART, series, "RU/s", seconds(s.nanos), (s.requestUnits - previous.requestUnits) * 1e9 / (s.nanos - previous.nanos));
                }
                previous = s;
            }
        }

        @Override
        public void close() {
            timer.shutdownNow();
        }
    }

    /** The live rate: loadgen pieces of {@link #LIVE_PIECE}, one after another, until stopped. */
    private final class LiveLoad implements AutoCloseable {
        private volatile boolean running = true;
        private final Future<Long> producing;

        LiveLoad(PipelineRun run, Path v2) {
            producing = background.submit(() -> {
                long acknowledged = 0;
                for (int piece = 0; running; piece++) {
                    Instant start = Instant.now().truncatedTo(ChronoUnit.SECONDS);
                    acknowledged += run.produce(size.liveRate * LIVE_PIECE.toSeconds(), "--loadgen.rate=" + size.liveRate,
                            "--loadgen.seed=" + (1000 + piece), "--loadgen.start=" + start, "--loadgen.window.ms=" + LIVE_PIECE.toMillis(),
                            "--loadgen.duplicate.fraction=0", "--loadgen.late.fraction=0", "--loadgen.future.fraction=0",
                            "--loadgen.malformed.fraction=0", "--loadgen.invalid.fraction=0", "--loadgen.future-skew.ms=" + FUTURE_SKEW_MS,
                            "--loadgen.rules-file=" + v2).acknowledged();
                }
                return acknowledged;
            });
        }

        /** Stops after the piece under way; the records acknowledged in all. */
        long stop() throws Exception {
            running = false;
            return producing.get(LIVE_PIECE.multipliedBy(6).toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        }

        @Override
        public void close() {
            running = false;
        }
    }

    /** What the live phase measured. */
    private record Live(double ru, double documents, double wallSeconds, double jobSeconds, long recordsRead) {}

    private Live liveAndBackfill(PipelineRun run, Timeline timeline, Path dir, Path v2, Applied applied) throws Exception {
        Duration untilSeam = Duration.between(Instant.now(), applied.seam().plus(END_MARGIN).plusSeconds(1));
        if (!untilSeam.isNegative()) {
            progress("waiting %d s for the seam: the live rate starts after it, so the backfill's side is the backlog alone",
                    untilSeam.toSeconds());
            Thread.sleep(untilSeam.toMillis());
        }
        progress("live: %d events/s (loadgen, event times now) and %d freshness markers/s", size.liveRate, PROBE_PER_SECOND);
        try (LiveLoad load = new LiveLoad(run, v2);
             FreshnessProbe probe = new FreshnessProbe(kafka.bootstrapServers(), registry, run.topics.transactions(), run.readPort(), run.id,
                     run.rules(), PROBE_PER_SECOND).observeHops(run.repartitionTopic(), run.topics.bucketUpdates(), run.container()).start()) {
            probe.awaitFirstVisible(Duration.ofMinutes(3));
            Thread.sleep(size.settle.toMillis());

            // Request bodies at the endpoint are the sinks' writes alone: the probe's and read-service's reads send none.
            long bytesA = cosmos.control().stats().requestBytes();
            Timeline.Sample a = timeline.now();
            CpuByPart cpuAlone = CpuByPart.start(cosmos.pid());
            Thread.sleep(size.baseline.toMillis());
            Timeline.Sample b = timeline.now();
            List<CpuByPart.Part> cpuBefore = cpuAlone.stop();
            long bytesB = cosmos.control().stats().requestBytes();
            double baselineSeconds = (b.nanos() - a.nanos()) / 1e9;
            double liveRu = (b.requestUnits() - a.requestUnits()) / baselineSeconds;
            double liveDocs = (b.documents() - a.documents()) / baselineSeconds;
            double liveBytes = (bytesB - bytesA) / baselineSeconds;
            progress("live alone: %,.1f RU/s, %,.1f documents/s over %.0f s", liveRu, liveDocs, baselineSeconds);

            long bytesC = cosmos.control().stats().requestBytes();
            Timeline.Sample c = timeline.now();
            CpuByPart cpuBackfill = CpuByPart.start(cosmos.pid());
            List<String> flags = run.commandFlags("--ingest.state-dir=" + dir.resolve("state-backfill"),
                    "--backfill.end-margin.ms=" + END_MARGIN.toMillis(), "--backfill.progress-interval.ms=5000");
            flags.addAll(List.of(backfillSettings));
            BackfillSettings settings = BackfillSettings.load(flags, Map.of());
            BackfillJob.Report report = new BackfillJob(settings, System.out, Clock.systemUTC()).run()
                    .orElseThrow(() -> new IllegalStateException("the backfill found nothing pending"));
            long jobEnd = System.nanoTime();
            awaitDrained(run, "the backfill's deltas");
            Timeline.Sample d = timeline.now();
            List<CpuByPart.Part> cpuDuring = cpuBackfill.stop();
            long bytesD = cosmos.control().stats().requestBytes();
            double window = (d.nanos() - c.nanos()) / 1e9;
            double ru = d.requestUnits() - c.requestUnits() - liveRu * window;
            double docs = d.documents() - c.documents() - liveDocs * window;
            double bytes = bytesD - bytesC - liveBytes * window;
            double jobSeconds = (jobEnd - c.nanos()) / 1e9;
            progress("backfill: %,d records read, %,d deltas, job %.1f s, written after %.1f s; %,.0f RU and %,.0f documents beyond the live rate",
                    report.recordsRead(), report.deltasSent(), jobSeconds, window, ru, docs);

            long acknowledged = load.stop();
            probe.stopSending(Duration.ofSeconds(60));
            double[] loadBaseline = timeline.load(a.nanos(), b.nanos());
            double[] loadBackfill = timeline.load(c.nanos(), d.nanos());

            String s = "live rate alone (v2, before the backfill)";
            results.figure(s, "live events per second (loadgen)", size.liveRate, "events/s")
                    .figure(s, "window", baselineSeconds, "s")
                    .figure(s, "sink request units per second", liveRu, "RU/s")
                    .figure(s, "sink documents written per second", liveDocs, "docs/s")
                    .figure(s, "request units per document written", liveRu / liveDocs, "RU/doc")
                    .figure(s, "load average (1 min), mean", loadBaseline[0], "")
                    .figure(s, "load average (1 min), max", loadBaseline[1], "");
            freshness("live freshness before the backfill", probe.markersSentBetween(a.nanos(), b.nanos()));
            // where the 2 cores went: on this machine freshness is bound by whichever part crowds the others out
            CpuByPart.figures(results, "CPU by part, live rate alone", cpuBefore);
            String f = "a. backfill of " + NEW_RULE + "/day";
            results.figure(f, "backfill.max-records-per-second", settings.recordsPerSecond(), "records/s")
                    .figure(f, "backfill.live-first.max-lag.ms (0: a fixed rate)", settings.liveLagBound().toMillis(), "ms")
                    .figure(f, "its commit interval (ingest.backlog.commit-interval.ms: all its records are history)",
                            settings.ingest().streamsCommitInterval().toMillis(), "ms")
                    .figure(f, "records read (the input up to its end when the job started)", report.recordsRead(), "records")
                    .figure(f, "of which before the seam (the backlog)", size.backlog, "records")
                    .figure(f, "grade-bucket deltas sent to stage 5", report.deltasSent(), "deltas")
                    .figure(f, "wall time of the job (start to marked complete)", jobSeconds, "s")
                    .figure(f, "records read per second of the job", report.recordsRead() / jobSeconds, "records/s")
                    .figure(f, "wall time until its deltas were written", window, "s")
                    .figure(f, "sink request units in that window", d.requestUnits() - c.requestUnits(), "RU")
                    .figure(f, "request units beyond the live rate", ru, "RU")
                    .figure(f, "documents written beyond the live rate", docs, "documents")
                    .figure(f, "request units per document written", ru / docs, "RU/doc")
                    .figure(f, "bytes sent to Cosmos per document written", bytes / docs, "bytes/doc")
                    .figure(f, "load average (1 min) when it started", c.load(), "")
                    .figure(f, "load average (1 min), mean during it", loadBackfill[0], "")
                    .figure(f, "load average (1 min), max during it", loadBackfill[1], "");
            freshness("a. live freshness during the backfill", probe.markersSentBetween(c.nanos(), d.nanos()));
            CpuByPart.figures(results, "CPU by part, live rate and the backfill", cpuDuring);
            results.figure("live rate", "records produced by the live rate in all", acknowledged, "records");
            timeline.plot(results, "live alone", a.nanos(), b.nanos());
            timeline.plot(results, "live and the backfill", c.nanos(), d.nanos());
            for (FreshnessProbe.Marker m : probe.markersSentBetween(a.nanos(), d.nanos())) {
                if (m.visibleNanos() == 0) continue;
                String series = m.producedNanos() < b.nanos() ? "live alone" : m.producedNanos() >= c.nanos() ? "live and the backfill" : null;
                if (series != null) results.point(FRESHNESS_CHART, series, "ms", timeline.seconds(m.producedNanos()), m.freshnessMs());
            }
            results.note(String.format(Locale.ROOT, "Live rate: loadgen at %d events/s in %d s pieces (event times now, no bad records or "
                    + "duplicates), started after the seam, plus the freshness probe's %d markers/s (its hops observed by point reads: "
                    + "not in the sink's figures). The live rate alone is measured over %.0f s before the backfill; the backfill's cost "
                    + "is what the live container's sink spent from the backfill's start until its deltas were written, less the live "
                    + "rate's own RU/s and documents/s over that window (%.1f s to %.1f s of the plots).", size.liveRate,
                    LIVE_PIECE.toSeconds(), PROBE_PER_SECOND, baselineSeconds, timeline.seconds(c.nanos()), timeline.seconds(d.nanos())));
            results.note("The backfill reads every input partition to its end as of its own start (BackfillJob takes the end offsets once "
                    + "it has waited for the seam plus backfill.end-margin.ms, not as of that instant): started after the live rate had "
                    + "run for a while, it also reads the live records since the seam, and skips them (they are on the live side).");
            return new Live(ru, docs, window, jobSeconds, report.recordsRead());
        }
    }

    private void freshness(String scenario, List<FreshnessProbe.Marker> markers) {
        results.figure(scenario, "the freshness target (ingest.freshness-target.ms, its default)",
                Long.parseLong(FreshnessTarget.TARGET.defaultValue().orElseThrow()), "ms");
        List<Double> served = FreshnessProbe.figures(results, scenario, markers);
        if (served.size() < markers.size()) results.figure(scenario, "markers not visible within 60 s", markers.size() - served.size(), "events");
        if (served.isEmpty()) return;
        results.figure(scenario, "freshness max", served.get(served.size() - 1), "ms");
        progress("%s: %d markers, p50 %.0f ms, p99 %.0f ms", scenario, markers.size(), EndToEndBench.percentile(served, 0.5),
                EndToEndBench.percentile(served, 0.99));
    }

    // --- 4. the ground truth and the live container --------------------------------------------------

    /**
     * Loadgen's ground truth under v2 of every record on the input topic: the backlog, the live pieces and the probe's
     * markers, fed from the topic because they came from many producers.
     */
    private GroundTruth truth(PipelineRun run, Path v2) throws Exception {
        GroundTruth truth = new GroundTruth(RuleSet.load(v2), Duration.ofMillis(FUTURE_SKEW_MS));
        AvroDeserializer<TransactionEvent> decode = new AvroDeserializer<>(new SchemaRegistryClient(registry), TransactionEvent.getClassSchema());
        String topic = run.topics.transactions();
        run.readInput(r -> truth.onEvent(decode.deserialize(topic, r.value()), Instant.ofEpochMilli(r.timestamp())));
        progress("ground truth under v2: %,d events counted, %,d buckets", truth.accepted(), truth.documents());
        return truth;
    }

    private void judgeLive(PipelineRun run, GroundTruth truth, Applied applied) throws Exception {
        awaitDrained(run, "the live rate's last records");
        Verdict v = GroundTruthJudge.of(truth).acrossRulesGenerations(applied.generation(), applied.since())
                .awaitEqual(run.container(), Duration.ofSeconds(120), Duration.ofSeconds(2));
        correctness("a. backfill of " + NEW_RULE + "/day", "live container: buckets differing from the v2 truth of all the input", v);
    }

    private void correctness(String scenario, String metric, Verdict v) {
        if (v.couldNotRead()) results.note(scenario + ": not judged against the ground truth: " + v.summary());
        else results.figure(scenario, metric, v.differing(), "buckets");
        if (!v.equal()) results.note(scenario + ": " + v.describe(3));
        progress("%s: %s", scenario, v.summary());
    }

    // --- 5. the full rebuild --------------------------------------------------------------------------

    private record Rebuild(double ru, double documents, double wallSeconds, long recordsRead) {}

    private Rebuild rebuild(PipelineRun run, Timeline timeline, Path v2, Instant day, GroundTruth truth) throws Exception {
        Instant to = day.plus(Duration.ofDays(1));
        progress("b. full rebuild: ./tally replay of every v2 grade over [%s, %s) into container %s", day, to, REBUILD_CONTAINER);
        CosmosControl.Stats before = cosmos.control().stats();
        Timeline.Sample start = timeline.now();
        ReplayReport r = new ReplayJob(ReplaySettings.load(run.commandFlags("--ingest.rules.file=" + v2, "--from=" + day, "--to=" + to,
                "--include-open-buckets", "--container=" + REBUILD_CONTAINER, "--replay.application-id=bench-rebuild-" + run.id,
                "--replay.progress-interval.ms=5000").toArray(String[]::new), Map.of(), Instant.now())).run();
        double[] load = timeline.load(start.nanos(), timeline.now().nanos());
        CosmosControl.Stats after = cosmos.control().stats();
        if (!r.complete()) throw new IllegalStateException("the rebuild did not finish:\n" + r.format());
        double bytes = after.requestBytes() - before.requestBytes();
        System.out.print(r.format());
        double seconds = r.elapsed().toMillis() / 1000.0;
        String s = "b. full rebuild of every v2 grade into a new container";
        results.figure(s, "records read", r.recordsRead(), "records")
                .figure(s, "records inside its range (the backlog's day)", r.accepted() - r.outsideRange(), "records")
                .figure(s, "entity buckets computed", r.computed(), "documents")
                .figure(s, "documents written", r.written(), "documents")
                .figure(s, "request units (the replay's writes)", r.writes().requestUnits(), "RU")
                .figure(s, "request units at the endpoint meanwhile (all requests)", after.requestCharge() - before.requestCharge(), "RU")
                .figure(s, "request units per document written", r.writes().requestUnits() / r.written(), "RU/doc")
                .figure(s, "bytes sent to Cosmos per document written", bytes / r.written(), "bytes/doc")
                .figure(s, "wall time", seconds, "s")
                .figure(s, "load average (1 min) when it started", start.load(), "")
                .figure(s, "load average (1 min), mean during it", load[0], "")
                .figure(s, "load average (1 min), max during it", load[1], "");
        CosmosAsyncContainer rebuilt = cosmos.asyncClient().getDatabase(run.database).getContainer(REBUILD_CONTAINER);
        Verdict v = GroundTruthJudge.of(truth).restrictedTo((pk, id) -> inside(id, day, to))
                .awaitEqual(rebuilt, Duration.ofSeconds(60), Duration.ofSeconds(2));
        correctness(s, "new container: buckets differing from the v2 truth of that day", v);
        floors(truth, day, to);
        return new Rebuild(r.writes().requestUnits(), r.written(), seconds, r.recordsRead());
    }

    /** Whether the grade bucket {@code id} ({@code grade|unit|index}) lies wholly inside [from, to). */
    static boolean inside(String id, Instant from, Instant to) {
        int last = id.lastIndexOf('|');
        int unitAt = id.lastIndexOf('|', last - 1);
        TimeUnit unit = TimeUnit.fromCode(id.substring(unitAt + 1, last));
        long index = Long.parseLong(id.substring(last + 1));
        return !unit.bucketStart(index).isBefore(from) && !unit.bucketStart(index + 1).isAfter(to);
    }

    /**
     * The least each operation must write, from the truth: the backfill one document per entity bucket of the new grade
     * in the backlog's range, the rebuild every entity bucket (an entity's grades of one unit and bucket) in it.
     */
    private void floors(GroundTruth truth, Instant from, Instant to) {
        Set<String> all = new HashSet<>();
        long newGrade = 0;
        for (Map.Entry<String, Map<String, BucketValue>> e : truth.buckets().entrySet()) {
            for (String id : e.getValue().keySet()) {
                if (!inside(id, from, to)) continue;
                int last = id.lastIndexOf('|');
                all.add(e.getKey() + '|' + id.substring(id.lastIndexOf('|', last - 1) + 1));
                if (id.startsWith(NEW_RULE + "|")) newGrade++;
            }
        }
        results.figure("floor (ground truth)", "entity buckets of the new grade in the backlog's day: what the backfill must write", newGrade, "documents")
                .figure("floor (ground truth)", "entity buckets of every grade in that day: what a rebuild must write", all.size(), "documents");
    }

    // --- the comparison -------------------------------------------------------------------------------

    private void compare(Live a, Rebuild b) {
        String s = "backfill / rebuild";
        results.figure(s, "request units", a.ru() / b.ru(), "x")
                .figure(s, "documents written", a.documents() / b.documents(), "x")
                .figure(s, "wall time (until written / replay's)", a.wallSeconds() / b.wallSeconds(), "x");
        results.note("Ratios: the backfill's request units and documents beyond the live rate, and its wall time from its start until "
                + "its deltas were written, over the rebuild's (its writer's request units, documents written, and the replay's "
                + "own elapsed time, reading included). The backfill reads at most backfill.max-records-per-second, so its wall "
                + "time is bounded below by the backlog over that rate; the rebuild reads as fast as it can, with nothing live beside it.");
        System.out.println();
        System.out.printf(Locale.ROOT, "| %-30s | %18s | %18s | %10s |%n", "", "backfill (1 grade)", "full rebuild", "ratio");
        System.out.printf(Locale.ROOT, "|%s|%s|%s|%s|%n", "-".repeat(32), "-".repeat(20), "-".repeat(20), "-".repeat(12));
        row("request units", a.ru(), b.ru());
        row("documents written", a.documents(), b.documents());
        row("wall time (s)", a.wallSeconds(), b.wallSeconds());
        row("records read", a.recordsRead(), b.recordsRead());
        System.out.println();
    }

    private static void row(String what, double backfill, double rebuild) {
        System.out.printf(Locale.ROOT, "| %-30s | %,18.1f | %,18.1f | %9.3fx |%n", what, backfill, rebuild, backfill / rebuild);
    }

    private static void progress(String format, Object... args) {
        System.out.printf(Locale.ROOT, "[" + NAME + "] " + format + "%n", args);
    }
}
