package io.tally.benchmarks.sink;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.ThrottlingRetryOptions;
import com.azure.cosmos.models.CosmosContainerProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.search.Search;
import io.tally.benchmarks.BenchResults;
import io.tally.benchmarks.BenchRun;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.schemas.Topics;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;

/**
 * Benchmark of the sink under added Cosmos latency (not part of the test suite). For each added delay (0, 2, 10 and
 * 50 ms on every request, the local endpoint's {@code PUT /latency}) it writes the same Zipf backlog of bucket updates
 * three times, in the same run and at the same delay: with the Tally sink (until every offset is committed), with the Tally
 * sink limited by AIMD alone ({@code sink.target-rate=0}: no Little's-law floor), and with the naive sink of
 * {@link SinkBench} (one upsert per update, 32 in flight, waiting for each poll's upserts; for a fixed time).
 * Figures are ratios against the 0 ms run of the same invocation, because the shared 2-core machine is noisy.
 *
 * <p>Writes {@code docs/benchmarks/data/sink-latency.json} (through {@link BenchResults}) and
 * {@code docs/benchmarks/sink-latency.md}. Args (all optional): updates per scenario (default 100000; about 5 minutes in all on a quiet 2-core machine), naive seconds per
 * scenario (15), delays in ms (comma separated, default {@code 0,2,10,50}), rounds (2: the delays run in turn, round after
 * round, and each figure is the mean of its rounds, so a burst of load from elsewhere does not land on one delay only). Run from the repository root:
 * <pre>./tally bench sink-latency [UPDATES [NAIVE_SECONDS [DELAYS_MS [ROUNDS]]]]</pre>
 */
public final class SinkLatencyBench {
    private static final int BUCKETS = 50_000;
    private static final Duration TALLY_LIMIT = Duration.ofSeconds(150);

    /** One run of the Tally sink through the backlog. */
    record TallyRun(double seconds, double documents, boolean finished, long updates, double callMeanMs, double opsPerCall,
                    double endLimit, double maxLimit, double maxTarget) {
        double updatesPerSecond() { return finished ? updates / seconds : Double.NaN; }

        double documentsPerSecond() { return documents / seconds; }
    }

    /** One delay's measurements: the sink as configured (Little's-law floor), the sink with AIMD alone, the naive sink. */
    record Scenario(int delayMs, TallyRun little, TallyRun aimd, double naivePerSecond) {}

    public static void main(String[] args) {
        BenchRun.begin("sink-latency");
        try {
            run(args);
        } catch (Throwable e) { // the in-process broker's threads would keep the JVM alive: fail visibly instead
            e.printStackTrace();
            System.exit(1);
        }
    }

    static void run(String[] all) throws Exception {
        // --quick (what ./tally bench --quick passes to every benchmark of the set): a smoke run of a minute or two.
        boolean quick = Arrays.asList(all).contains("--quick");
        String[] args = Arrays.stream(all).filter(a -> !a.equals("--quick")).toArray(String[]::new);
        int updates = args.length > 0 ? Integer.parseInt(args[0]) : quick ? 10_000 : 100_000;
        int naiveSeconds = args.length > 1 ? Integer.parseInt(args[1]) : quick ? 5 : 15;
        int[] delays = args.length > 2 ? Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray()
                : quick ? new int[] {0, 10} : new int[] {0, 2, 10, 50};
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : quick ? 1 : 2;
        for (String quiet : List.of("com.azure", "reactor.netty")) { // the endpoint's closed idle connections are retried by the SDK
            ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(quiet)).setLevel(ch.qos.logback.classic.Level.OFF);
        }
        Path root = Files.exists(Path.of("docs")) ? Path.of(".") : Path.of("..");
        double loadStart = load();
        TestKafka kafka = TestKafka.get();
        LocalCosmos cosmos = System.getenv("TALLY_COSMOS_ENDPOINT") != null ? LocalCosmos.get() : LocalCosmos.startPrivate();
        CosmosControl control = cosmos.control();
        BenchRun.begin("sink-latency").cosmos(control);
        String run = UUID.randomUUID().toString().substring(0, 6);
        BenchResults results = new BenchResults("sink-latency", "Sink under added Cosmos latency",
                "./tally bench sink-latency " + (quick && args.length == 0 ? "--quick" : updates + " " + naiveSeconds));
        CosmosAsyncClient naiveClient = cosmos.clientBuilder().throttlingRetryOptions(new ThrottlingRetryOptions()
                .setMaxRetryAttemptsOnThrottledRequests(Integer.MAX_VALUE).setMaxRetryWaitTime(Duration.ofMinutes(10))).buildAsyncClient();
        List<Scenario> scenarios = new ArrayList<>();
        try {
            // Warm-up, not reported: JIT, connection pools and the broker's page cache, so 0 ms is not measured cold.
            scenario(kafka, cosmos, naiveClient, run + "w", 0, Math.max(10_000, updates / 4), 3,
                    new BenchResults("sink-latency-warmup", "warm-up", ""), "warm-up", true);
            for (int round = 1; round <= rounds; round++) {
                for (int delay : delays) {
                    control.setLatency(delay);
                    scenarios.add(scenario(kafka, cosmos, naiveClient, run + round, delay, updates, naiveSeconds, results,
                            delay + " ms" + (rounds > 1 ? " #" + round : ""), round % 2 == 1));
                    System.out.println(scenarios.get(scenarios.size() - 1));
                }
            }
        } finally {
            control.setLatency(0);
            naiveClient.close();
        }
        report(results, mean(scenarios, delays), scenarios, updates, naiveSeconds, loadStart, root);
        System.exit(0);
    }

    static Scenario scenario(TestKafka kafka, LocalCosmos cosmos, CosmosAsyncClient naiveClient, String run, int delay, int updates,
                             int naiveSeconds, BenchResults results, String label, boolean littleFirst) throws Exception {
        String prefix = "lat-" + run + "-" + delay + "-";
        String topic = Topics.Names.withPrefix(prefix).bucketUpdates();
        kafka.createTopics(List.of(TestKafka.topic(topic, 6, Map.of("cleanup.policy", "compact")), TestKafka.topic(topic + ".dlq", 1, Map.of())));
        SinkBench.produce(kafka, topic, updates, BUCKETS, 1); // the same workload at every delay
        long[] ends = SinkBench.endOffsets(kafka, topic);
        // The first sink on a freshly produced topic runs slower (broker and page cache still busy with the produce):
        // alternate which mode goes first, round after round.
        TallyRun little = null;
        TallyRun aimd = null;
        for (int i = 0; i < 2; i++) {
            if ((i == 0) == littleFirst) {
                little = tally(kafka, cosmos, prefix, topic, ends, run + "-" + delay, updates, results, "Tally sink", label);
            } else {
                aimd = tally(kafka, cosmos, prefix, topic, ends, run + "-" + delay + "-aimd", updates, results,
                        "Tally sink, AIMD alone (sink.target-rate=0)", label, "--sink.target-rate=0");
            }
        }

        // The naive sink on the same topic, same delay.
        naiveClient.createDatabaseIfNotExists("lat-naive-" + run).block();
        naiveClient.getDatabase("lat-naive-" + run).createContainerIfNotExists(new CosmosContainerProperties("buckets-" + delay, "/pk")).block();
        CosmosAsyncContainer naive = naiveClient.getDatabase("lat-naive-" + run).getContainer("buckets-" + delay);
        AtomicLong progress = new AtomicLong();
        AtomicBoolean sampling = new AtomicBoolean(true);
        long n0 = System.nanoTime();
        Thread sampler = sampler(sampling, n0, () -> { }, progress::get, "naive sink: upserts per second", label, results);
        double[] naiveResult = SinkBench.naive(kafka, topic, naive, updates, Duration.ofSeconds(naiveSeconds), progress);
        sampling.set(false);
        sampler.join();
        return new Scenario(delay, little, aimd, naiveResult[2] / naiveResult[0]);
    }

    /** A Tally sink (own group, own database) through the whole topic, at most {@link #TALLY_LIMIT}. */
    static TallyRun tally(TestKafka kafka, LocalCosmos cosmos, String prefix, String topic, long[] ends, String id, int updates,
                          BenchResults results, String chart, String label, String... flags) throws Exception {
        String group = "lat-" + id;
        List<String> args = new ArrayList<>(List.of("--ingest.role=sink", "--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--topics.prefix=" + prefix, "--sink.group-id=" + group, "--cosmos.endpoint=" + cosmos.endpoint(),
                "--cosmos.database=lat-tally-" + id, "--sink.metrics.port=-1"));
        args.addAll(List.of(flags));
        IngestSettings settings = IngestSettings.load(args.toArray(String[]::new), Map.of());
        double[] maxLimit = {0};
        double[] maxTarget = {0};
        try (IngestApp sink = new IngestApp(settings)) {
            sink.start(); // client, container and warm-up happen here, before the clock starts
            MeterRegistry m = sink.sink().metrics().registry();
            DoubleSupplier docs = () -> counter(m, "tally.sink.documents.written");
            DoubleSupplier limit = () -> gauge(m, "tally.sink.concurrency.limit");
            DoubleSupplier target = () -> gauge(m, "tally.sink.target.concurrency");
            DoubleSupplier inFlight = () -> gauge(m, "tally.sink.in.flight.documents");
            DoubleSupplier callLatency = () -> gauge(m, "tally.sink.call.latency.seconds");
            long t0 = System.nanoTime();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = sampler(sampling, t0, () -> {
                double t = (System.nanoTime() - t0) / 1e9;
                results.point(chart + ": concurrency limit", label, "bulk calls", t, limit.getAsDouble());
                results.point(chart + ": Little's-law target concurrency", label, "bulk calls", t, target.getAsDouble());
                results.point(chart + ": documents in flight", label, "documents", t, inFlight.getAsDouble());
                results.point(chart + ": median bulk-call latency", label, "ms", t, callLatency.getAsDouble() * 1000);
                maxLimit[0] = Math.max(maxLimit[0], limit.getAsDouble());
                maxTarget[0] = Math.max(maxTarget[0], target.getAsDouble());
            }, docs, chart + ": documents written per second", label, results);
            boolean finished = true;
            try {
                SinkBench.awaitCommitted(kafka, group, topic, ends, TALLY_LIMIT);
            } catch (IllegalStateException e) {
                finished = false; // report the rate reached within the bound
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            sampling.set(false);
            sampler.join();
            Timer call = Search.in(m).name("tally.sink.bulk.call").timer();
            var size = Search.in(m).name("tally.sink.bulk.call.operations").summary();
            TallyRun r = new TallyRun(seconds, docs.getAsDouble(), finished, updates,
                    call == null ? Double.NaN : call.mean(java.util.concurrent.TimeUnit.MILLISECONDS), size == null ? Double.NaN : size.mean(),
                    limit.getAsDouble(), maxLimit[0], maxTarget[0]);
            System.out.println(chart + ", " + label + ": " + r);
            return r;
        }
    }

    /** Samples once a second: {@code extra}, and the per-second rate of {@code count} as a series. */
    private static Thread sampler(AtomicBoolean sampling, long t0, Runnable extra, DoubleSupplier count, String chart, String label,
                                  BenchResults results) {
        Thread t = new Thread(() -> {
            double last = count.getAsDouble();
            long lastNanos = System.nanoTime();
            while (sampling.get()) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
                long now = System.nanoTime();
                double c = count.getAsDouble();
                results.point(chart, label, "per second", (now - t0) / 1e9, (c - last) / ((now - lastNanos) / 1e9));
                last = c;
                lastNanos = now;
                extra.run();
            }
        }, "bench-sampler");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static double counter(MeterRegistry m, String name) {
        return Search.in(m).name(name).counters().stream().mapToDouble(Counter::count).sum();
    }

    private static double gauge(MeterRegistry m, String name) {
        Gauge g = Search.in(m).name(name).gauge();
        return g == null ? Double.NaN : g.value();
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /** Per delay, the mean of its rounds (maxima for the concurrency columns). */
    static List<Scenario> mean(List<Scenario> all, int[] delays) {
        List<Scenario> out = new ArrayList<>();
        for (int d : delays) {
            List<Scenario> r = all.stream().filter(s -> s.delayMs() == d).toList();
            out.add(new Scenario(d, mean(r.stream().map(Scenario::little).toList()), mean(r.stream().map(Scenario::aimd).toList()),
                    r.stream().mapToDouble(Scenario::naivePerSecond).average().orElse(Double.NaN)));
        }
        return out;
    }

    private static TallyRun mean(List<TallyRun> r) {
        java.util.function.ToDoubleFunction<java.util.function.ToDoubleFunction<TallyRun>> avg =
                f -> r.stream().mapToDouble(f).average().orElse(Double.NaN);
        return new TallyRun(avg.applyAsDouble(TallyRun::seconds), avg.applyAsDouble(TallyRun::documents),
                r.stream().allMatch(TallyRun::finished), r.get(0).updates(), avg.applyAsDouble(TallyRun::callMeanMs),
                avg.applyAsDouble(TallyRun::opsPerCall), avg.applyAsDouble(TallyRun::endLimit),
                r.stream().mapToDouble(TallyRun::maxLimit).max().orElse(Double.NaN), r.stream().mapToDouble(TallyRun::maxTarget).max().orElse(Double.NaN));
    }

    static void report(BenchResults results, List<Scenario> scenarios, List<Scenario> rounds, int updates, int naiveSeconds,
                       double loadStart, Path root) throws Exception {
        Scenario base = scenarios.stream().filter(s -> s.delayMs() == 0).findFirst().orElse(scenarios.get(0));
        int roundCount = rounds.size() / Math.max(1, scenarios.size());
        StringBuilder md = new StringBuilder();
        md.append("# Sink under added Cosmos latency\n\n")
          .append("Generated by `benchmarks/src/main/java/io/tally/benchmarks/sink/SinkLatencyBench.java` on ").append(Instant.now().toString(), 0, 16)
          .append(String.format(Locale.ROOT, " UTC. Machine: %d cores shared with other engineers' builds (load average %.1f at the start, "
                  + "%.1f at the end): absolute figures are noisy; the ratios against the 0 ms run of the same invocation are the figures "
                  + "to read.%n%n", Runtime.getRuntime().availableProcessors(), loadStart, load()))
          .append("Command (from the repository root): `./tally bench sink-latency ")
          .append(updates).append(' ').append(naiveSeconds).append(" 0,2,10,50 ").append(roundCount).append("`.\n\n")
          .append(String.format(Locale.ROOT, "Workload per delay: the same %,d bucket updates over %,d buckets (Zipf s=1.1), a backlog on "
                  + "6 partitions, written three times: by the Tally sink with its defaults (Little's-law floor, `sink.target-rate=20000`), "
                  + "by the Tally sink with AIMD alone (`sink.target-rate=0`, the sink before this change), each until every offset is "
                  + "committed (at most %d s), and by the naive sink (one upsert per update, 32 in flight, the next poll only after the "
                  + "previous poll's upserts) for %d s. The delay is added by the local Cosmos endpoint to every request (`PUT /latency`). "
                  + "Each row is the mean of %d round(s); the delays ran in turn, round after round, and the two Tally modes took "
                  + "turns at going first on the fresh topic.%n%n",
                  updates, BUCKETS, TALLY_LIMIT.toSeconds(), naiveSeconds, roundCount))
          .append("| added delay | Tally updates/s | Tally documents/s | **vs 0 ms** | AIMD alone: updates/s | AIMD alone vs 0 ms | naive upserts/s "
                  + "| naive vs 0 ms | **Tally ÷ naive** | mean bulk call ms | ops per call | limit: end / max (AIMD alone: max) | Little's-law target: max |\n")
          .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Scenario s : scenarios) {
            String label = s.delayMs() + " ms";
            TallyRun t = s.little();
            double ratio = t.documentsPerSecond() / base.little().documentsPerSecond();
            double aimdRatio = s.aimd().documentsPerSecond() / base.aimd().documentsPerSecond();
            double naiveRatio = s.naivePerSecond() / base.naivePerSecond();
            results.figure(label, "Tally updates/s", t.updatesPerSecond(), "updates/s")
                   .figure(label, "Tally documents/s", t.documentsPerSecond(), "docs/s")
                   .figure(label, "Tally documents/s vs 0 ms", ratio, "ratio")
                   .figure(label, "Tally AIMD alone documents/s", s.aimd().documentsPerSecond(), "docs/s")
                   .figure(label, "Tally AIMD alone vs 0 ms", aimdRatio, "ratio")
                   .figure(label, "naive upserts/s", s.naivePerSecond(), "upserts/s")
                   .figure(label, "naive vs 0 ms", naiveRatio, "ratio")
                   .figure(label, "Tally / naive (updates/s)", t.updatesPerSecond() / s.naivePerSecond(), "ratio")
                   .figure(label, "mean bulk call", t.callMeanMs(), "ms")
                   .figure(label, "max concurrency limit", t.maxLimit(), "bulk calls");
            md.append(String.format(Locale.ROOT, "| %d ms | %,.0f | %,.0f | **%.2f** | %,.0f | %.2f | %,.0f | %.2f | **%.1f×** | %.0f | %.0f | %.0f / %.0f (%.0f) | %.0f |%n",
                    s.delayMs(), t.updatesPerSecond(), t.documentsPerSecond(), ratio, s.aimd().updatesPerSecond(), aimdRatio,
                    s.naivePerSecond(), naiveRatio, t.updatesPerSecond() / s.naivePerSecond(), t.callMeanMs(), t.opsPerCall(),
                    t.endLimit(), t.maxLimit(), s.aimd().maxLimit(), t.maxTarget()));
        }
        md.append("\nPer round (Tally updates/s, AIMD alone updates/s, naive upserts/s): ");
        md.append(String.join("; ", rounds.stream().map(r -> String.format(Locale.ROOT, "%d ms: %,.0f, %,.0f, %,.0f", r.delayMs(),
                r.little().updatesPerSecond(), r.aimd().updatesPerSecond(), r.naivePerSecond())).toList())).append(".\n");
        md.append("\nThe aggregation stage does not talk to Cosmos, so the sink is the stage added latency reaches: its documents/s "
                + "is the pipeline's end-to-end ceiling under that latency. Time series (documents/s, concurrency limit and target, "
                + "documents in flight, bulk-call latency, per delay and round) are in `docs/benchmarks/data/sink-latency.json` and the "
                + "plots of docs/benchmarks.md.\n");
        results.note("Same backlog at every delay, written by the Tally sink (defaults), the Tally sink with AIMD alone (sink.target-rate=0) "
                + "and the naive sink (one upsert per update, 32 in flight, waits for each poll; " + naiveSeconds + " s). Ratios are "
                + "against the 0 ms run of the same invocation; each figure is the mean of " + roundCount + " round(s).");
        Path data = results.write(root.resolve(BenchResults.DATA_DIR));
        writePage(root.resolve("docs/benchmarks/sink-latency.md"), md.toString());
        System.out.println(md + "\nwritten " + data.toAbsolutePath());
    }

    /** Marks the hand-written reading of a generated page: a new run replaces what comes before it and keeps the rest. */
    public static final String ANALYSIS_MARKER = "<!-- analysis: written by hand, kept when the benchmark regenerates the page -->";

    /** Writes {@code generated} to {@code page}, keeping the page's hand-written part after {@link #ANALYSIS_MARKER}. */
    public static void writePage(Path page, String generated) throws java.io.IOException {
        String kept = "";
        if (Files.exists(page)) {
            String old = Files.readString(page);
            int at = old.indexOf(ANALYSIS_MARKER);
            if (at >= 0) kept = "\n" + old.substring(at);
        }
        Files.writeString(page, generated + kept);
    }
}
