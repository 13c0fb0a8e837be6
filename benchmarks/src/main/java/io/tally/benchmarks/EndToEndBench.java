package io.tally.benchmarks;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.models.CosmosContainerProperties;
import io.tally.cosmos.CosmosClients;
import io.tally.loadgen.Loadgen;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.model.BucketId;
import io.tally.model.TimeUnit;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import io.tally.testsupport.truth.GroundTruthJudge.Verdict;
import io.tally.benchmarks.sink.SinkBench;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;

/**
 * The whole pipeline under load, on the local stack's real parts in one JVM: loadgen -> Kafka (in-process
 * broker, or KAFKA_BOOTSTRAP_SERVERS) -> ingest-app (both roles) -> a private local Cosmos endpoint ->
 * read-service. Writes docs/benchmarks/data/end-to-end.json.
 *
 * <ol>
 *   <li>a. throughput: N events produced as fast as the broker takes them (one burst, a backlog), events/s
 *       through each stage over time and N / (time until the sink has committed the last bucket update);
 *   <li>b. freshness: all along, 20 marker events/s for one probe customer, each timed from send until
 *       read-service serves a bucket that counts it (under the backlog, then idle);
 *   <li>c. Cosmos documents and RU per event: Tally's sink against a naive sink (one upsert per bucket
 *       update, {@link SinkBench#naive}) on a prefix of the same bucket-updates topic, and against one
 *       upsert per bucket each event touches (no coalescing at all);
 *   <li>d. the container's throughput set to half the RU/s that (a) used, the same N events again: events/s,
 *       429s, backlog over time, and every bucket compared with loadgen's ground truth at the end;
 *   <li>e. a again on a fresh pipeline in the JVM that ran a to d: the throughput once the JIT has compiled the
 *       hot code, against a's cold start.
 *   <li>f. the rule count: e again under each rule-axis file (by default {@link AggregationBench#MANY_RULES}, 36 rules
 *       over 5 entity fields, and {@link RuleAxis#VELOCITY}, 51 rules with minute to month units and pair rules):
 *       events/s, idle freshness, CPU by part and CPU µs per event and per grade update (the JVM and the endpoint apart),
 *       bytes, documents and RU per event, the floor of documents per event (the ground truth's distinct entity buckets,
 *       and the same if coarser documents held finer units), and the RU and latency of a feature-vector read, beside e's,
 *       with the ratio of each rule set to e's.
 * </ol>
 *
 * <pre>./tally bench end-to-end [--quick] [--events=N] [--rules=FILE] [--rule-axis=FILE[,FILE...]|none] [--with=KEY=VALUE...]</pre>
 * (--quick: 20,000 events, for a smoke run of a couple of minutes; --rules: the whole run under another rules file
 * (aggregation, reads and ground truth); --rule-axis: scenario f's rules files, comma-separated; --with: an ingest-app setting other
 * than its default, e.g. --with=sink.window.max-documents=40000, named in the report's command line.)
 */
public final class EndToEndBench {
    static final String NAME = "end-to-end";
    /** Scenario f's files: the rule count as an axis of three points with the default rules (36 and 51 rules). */
    static final List<String> DEFAULT_RULE_AXIS = List.of(AggregationBench.MANY_RULES, RuleAxis.VELOCITY.file());
    private static final int PROBE_PER_SECOND = 20;
    private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(20);

    /** Feature-vector reads per rule set in scenarios e and f: the busiest customers, one read each. */
    private static final int FEATURE_READS = 200;

    private final boolean quick;
    private final long events;
    private final String rules;
    private final List<String> ruleAxis;
    private final String[] settings;
    private final TestKafka kafka;
    private final String registry;
    private final LocalCosmos cosmos;
    private final BenchResults results;
    /** Loadgen's producing loop and its ground truth run here: named so CPU by part counts them as the benchmark's own. */
    private final ExecutorService background = Executors.newCachedThreadPool(r -> new Thread(r, CpuByPart.HARNESS_PREFIX + "loadgen-and-truth"));

    private EndToEndBench(boolean quick, long events, String rules, List<String> ruleAxis, String[] settings) {
        this.quick = quick;
        this.events = events;
        this.rules = rules;
        this.ruleAxis = ruleAxis;
        this.settings = settings;
        this.kafka = TestKafka.get();
        this.registry = LocalSchemaRegistry.get().url();
        // A private endpoint: the budget of scenario d and the request counters must be this run's alone.
        this.cosmos = LocalCosmos.startPrivate();
        BenchRun.begin(NAME).cosmos(cosmos.control());
        this.results = new BenchResults(NAME, "End to end: loadgen -> Kafka -> ingest-app -> Cosmos -> read-service",
                "./tally bench end-to-end" + (quick ? " --quick" : "") + (events != defaultEvents(quick) ? " --events=" + events : "")
                        + (rules != null ? " --rules=" + rules : "")
                        + (!ruleAxis.equals(DEFAULT_RULE_AXIS) ? " --rule-axis=" + (ruleAxis.isEmpty() ? "none" : String.join(",", ruleAxis)) : "")
                        + Arrays.stream(settings).map(s -> " --with=" + s.substring(2)).collect(java.util.stream.Collectors.joining()));
    }

    public static void main(String[] args) throws Exception {
        BenchRun.begin(NAME);
        boolean quick = Arrays.asList(args).contains("--quick");
        long events = Arrays.stream(args).filter(a -> a.startsWith("--events=")).map(a -> Long.parseLong(a.substring(9)))
                .findFirst().orElse(defaultEvents(quick));
        String[] settings = Arrays.stream(args).filter(a -> a.startsWith("--with=")).map(a -> "--" + a.substring(7)).toArray(String[]::new);
        String rules = Arrays.stream(args).filter(a -> a.startsWith("--rules=")).map(a -> a.substring(8)).findFirst().orElse(null);
        List<String> ruleAxis = Arrays.stream(args).filter(a -> a.startsWith("--rule-axis=")).map(a -> a.substring(12)).findFirst()
                .map(a -> a.equals("none") ? List.<String>of() : List.of(a.split(","))).orElse(DEFAULT_RULE_AXIS);
        quietLibraries();
        try {
            new EndToEndBench(quick, events, rules, ruleAxis, settings).run();
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    /** Sized for about two minutes of pipeline work per run on a quiet 2-core machine (over 1,000 events/s end to end). */
    private static long defaultEvents(boolean quick) {
        return quick ? 20_000 : 100_000;
    }

    private void run() throws Exception {
        progress("events per run: %,d; broker %s; Cosmos endpoint %s", events, kafka.origin(), cosmos.origin());
        results.note(String.format(Locale.ROOT, "All in one JVM (heap at most %,d MB) on the local stack: broker %s, schema registry %s, a private "
                + "local Cosmos endpoint (Node, one thread; RU are its RU model, local/cosmos/README.md), ingest-app with both roles "
                + "and read-service at their defaults. Every figure is from this run; compare ratios, not absolute rates: "
                + "the 2 cores are shared with other builds (load average in the machine line).", Runtime.getRuntime().maxMemory() >> 20,
                kafka.origin(), registry));
        results.note(String.format(Locale.ROOT, "Workload: loadgen defaults (Zipf over 10,000 customers, 500 SKUs, events spread over "
                + "48 h, 1%% duplicates, ~0.4%% bad records), %,d events produced as fast as the broker takes them: the whole run "
                + "is one burst the pipeline works through.", events));

        try {
            RunOutcome unlimited = throughputAndFreshness();
            naiveComparison(unlimited);
            ruBudget(unlimited);
            RuleFigures warm = warmThroughput(unlimited);
            if (!ruleAxis.isEmpty()) ruleCount(warm);
        } catch (Exception e) {
            // What was measured before the failure is still worth a look; the note says the run is incomplete.
            results.note("This run stopped early: " + e);
            progress("wrote %s (incomplete)", results.write());
            throw e;
        }
        progress("wrote %s", results.write());
        background.shutdownNow();
    }

    /** What scenario a (with b inside it) leaves for c and d. */
    private record RunOutcome(PipelineRun run, PipelineSampler.Totals totals, GroundTruth truth, long events) {}

    /** Scenarios a and b: the burst at unlimited RU, freshness measured all along and for a while after. */
    private RunOutcome throughputAndFreshness() throws Exception {
        progress("a. throughput and b. freshness: %,d events at unlimited RU", events);
        PipelineRun run = new PipelineRun("a", kafka, registry, cosmos, rules, settings).start();
        Measured m = measure(run, "a. throughput (unlimited RU)", "unlimited RU", true);
        double eventsPerSecond = burstFigures("a. throughput", m);
        results.figure("a. throughput", "time until the last bucket is written", m.totals.seconds(), "s")
                .figure("a. throughput", "peak sink consumer lag", m.totals.peakSinkLag(), "records");
        cpuFigures("a. CPU by part, burst until drained", m);
        results.note("a, CPU by part: cores used on average from the burst's first event until the sink committed its last update, "
                + "threads grouped by name with ids and numbers as #, against the machine's " + Runtime.getRuntime().availableProcessors()
                + " cores. A stream thread uses at most one core; the part near its limit, or all parts together near the cores, "
                + "is what bounds the throughput.");
        m.freshnessFigures(this, "unlimited RU");
        hopFigures("b. freshness by hop, unlimited RU, idle", m.idle);
        progress("a: %,.0f events/s end to end (%.1f s); %s", eventsPerSecond, m.totals.seconds(), m.verdict.summary());
        return new RunOutcome(run, m.totals, m.truth, m.totals.events());
    }

    /** Scenario c: documents and RU per event, Tally against two naive sinks. */
    private void naiveComparison(RunOutcome a) throws Exception {
        long updates = (long) a.totals.updatesConsumed();
        // Every update in the full run: a prefix would be mostly first writes of new buckets (creates, the cheap kind)
        // and would understate what upserting all of them costs.
        int sample = (int) Math.min(updates, quick ? 5_000 : 400_000);
        progress("c. naive sink: one upsert per bucket update, over %,d of the run's %,d bucket updates", sample, updates);
        // The endpoint's shared client (its connections are open): on a loaded machine a new client's first TLS
        // handshakes can time out. Nothing throttles here, so its default retries suffice.
        CosmosAsyncClient client = cosmos.asyncClient();
        String db = "e2e-naive-" + a.run.id;
        client.createDatabaseIfNotExists(db).block();
        // The indexing policy ingest-app gives its container, so both sinks pay the same per write.
        client.getDatabase(db).createContainerIfNotExists(new CosmosContainerProperties(PipelineRun.CONTAINER, "/pk")
                .setIndexingPolicy(CosmosClients.readPathsOnly())).block();
        CosmosAsyncContainer container = client.getDatabase(db).getContainer(PipelineRun.CONTAINER);
        double[] naive = SinkBench.naive(kafka, a.run.topics.bucketUpdates(), container, sample);
        a.run.close();
        double ruPerUpsert = naive[1] / naive[2];
        double n = a.events;
        double tallyDocs = a.totals.documents() / n;
        double tallyRu = a.totals.requestUnits() / n;
        double updatesPerEvent = updates / n;
        double bucketsPerEvent = bucketUpdatesBeforeCoalescing(a.truth) / n;
        results.figure("c. Tally sink", "documents written per event", tallyDocs, "docs/event")
                .figure("c. Tally sink", "RU per event", tallyRu, "RU/event")
                .figure("c. naive sink over bucket-updates", "documents written per event", updatesPerEvent, "docs/event")
                .figure("c. naive sink over bucket-updates", "RU per event", ruPerUpsert * updatesPerEvent, "RU/event")
                .figure("c. naive sink over bucket-updates", "upserts/s (measured on the sample)", sample / naive[0], "upserts/s")
                .figure("c. naive per-event sink", "documents written per event", bucketsPerEvent, "docs/event")
                .figure("c. naive per-event sink", "RU per event", ruPerUpsert * bucketsPerEvent, "RU/event")
                .figure("c. ratio", "naive over bucket-updates / Tally, RU per event", ruPerUpsert * updatesPerEvent / tallyRu, "x")
                .figure("c. ratio", "naive per-event / Tally, RU per event", ruPerUpsert * bucketsPerEvent / tallyRu, "x");
        results.note(String.format(Locale.ROOT, "c: the naive sink over bucket-updates is SinkBench's naive writer (one upsert per record, "
                + "32 in flight, no coalescing, no grouping), run on %,d of the %,d bucket updates of run a, from the first, into "
                + "its own container with the same indexing policy; its %.2f RU per upsert is applied to all of them. The aggregation "
                + "already emits each changed bucket once per commit interval, so the naive per-event sink (one upsert for every bucket "
                + "every accepted event touches, %.2f per event by the ground truth) is the no-coalescing baseline.", sample, updates,
                ruPerUpsert, bucketsPerEvent));
        progress("c: Tally %.2f docs/event %.2f RU/event; naive %.2f RU/upsert", tallyDocs, tallyRu, ruPerUpsert);
    }

    /** Scenario d: the same burst with the container held to half of the RU/s that run a used. */
    private void ruBudget(RunOutcome a) throws Exception {
        double demand = a.totals.requestUnits() / a.totals.seconds();
        double budget = Math.max(100, Math.round(demand / 2));
        progress("d. RU budget: run a used %,.0f RU/s on average; container set to %,.0f RU/s", demand, budget);
        CosmosControl control = cosmos.control();
        try (PipelineRun run = new PipelineRun("d", kafka, registry, cosmos, rules, settings).start()) {
            control.setThroughput(run.database, PipelineRun.CONTAINER, budget);
            CosmosControl.Stats before = control.stats();
            double sent0 = run.sinkCounter("tally.sink.operations.sent", null);
            double throttled0 = run.sinkCounter("tally.sink.throttled", null);
            String chart = "d. RU budget (half the demand)";
            Measured m = measure(run, chart, "half the RU demand", false);
            CosmosControl.Stats after = control.stats();
            // Over the same span (the probe's warm-up included): operations sent counts every attempt, retries too.
            double sent = run.sinkCounter("tally.sink.operations.sent", null) - sent0;
            double share429 = sent == 0 ? 0 : (run.sinkCounter("tally.sink.throttled", null) - throttled0) / sent;
            double budgetUsed = m.totals.requestUnits() / m.totals.seconds() / budget;
            results.point(chart + ": request units per second", "container budget", "RU/s", 0, budget)
                    .point(chart + ": request units per second", "container budget", "RU/s", m.totals.seconds(), budget);
            double eventsPerSecond = m.totals.events() / m.totals.seconds();
            double unlimitedPerSecond = a.totals.events() / a.totals.seconds();
            results.figure("d. RU budget", "demand measured in a", demand, "RU/s")
                    .figure("d. RU budget", "container throughput", budget, "RU/s")
                    .figure("d. RU budget", "sink RU used", m.totals.requestUnits() / m.totals.seconds(), "RU/s")
                    .figure("d. RU budget", "end-to-end throughput", eventsPerSecond, "events/s")
                    .figure("d. RU budget", "throughput / unlimited (a)", eventsPerSecond / unlimitedPerSecond, "x")
                    .figure("d. RU budget", "documents written per event", m.totals.documents() / m.totals.events(), "docs/event")
                    .figure("d. RU budget", "operations answered 429, as the sink counts them", m.totals.throttled(), "operations")
                    .figure("d. RU budget", "requests answered 429 by Cosmos (sink and reads)", after.status429() - before.status429(), "requests")
                    .figure("d. RU budget", "bulk operations refused by the budget (Cosmos)",
                            after.batchOperationsThrottled() - before.batchOperationsThrottled(), "operations")
                    .figure("d. RU budget", "peak sink consumer lag", m.totals.peakSinkLag(), "records")
                    .figure("d. RU budget", "bulk operations sent by the sink (retries included)", sent, "operations")
                    .figure("d. RU budget", "429 share (operations answered 429 / operations sent)", 100 * share429, "%")
                    .figure("d. RU budget", "budget used (sink RU/s / container throughput)", 100 * budgetUsed, "%");
            correctnessFigure("d. RU budget", m.verdict);
            m.freshnessFigures(this, "half the RU demand");
            results.note("d: the budget applies to the whole container, so read-service's probe reads share it with the sink "
                    + "(as they would in production). The sink paces its request units (a token bucket whose rate it learns from 429s, "
                    + "RuPacer) and coalesces more as its backlog grows.");
            progress("d: %,.0f events/s (%.2fx unlimited), %,.0f 429s (%.1f%% of %,.0f operations sent), %.0f%% of the budget used; %s",
                    eventsPerSecond, eventsPerSecond / unlimitedPerSecond, m.totals.throttled(), 100 * share429, sent,
                    100 * budgetUsed, m.verdict.summary());
        } finally {
            control.reset();
        }
    }

    /**
     * Scenario e: scenario a again, on a fresh pipeline in the JVM that ran a to d. Run a starts on a cold JVM,
     * whose JIT compilers take a quarter of the machine during its burst (a's CPU by part); a long-running
     * ingest-app has compiled its hot code long before. Run a stays the figure comparable with earlier runs.
     */
    private RuleFigures warmThroughput(RunOutcome a) throws Exception {
        progress("e. throughput, warm JVM: %,d events at unlimited RU on a fresh pipeline", events);
        try (PipelineRun run = new PipelineRun("e", kafka, registry, cosmos, rules, settings).start()) {
            Measured m = measure(run, "e. throughput, warm JVM (unlimited RU)", "unlimited RU, warm JVM", false);
            double eventsPerSecond = burstFigures("e. throughput, warm JVM", m);
            double cold = a.totals.events() / a.totals.seconds();
            results.figure("e. throughput, warm JVM", "throughput / cold JVM (a)", eventsPerSecond / cold, "x");
            cpuFigures("e. CPU by part, warm JVM, burst until drained", m);
            results.note("e: run a again (same events, unlimited RU) on a fresh pipeline in the JVM that ran a to d, so its code is "
                    + "compiled already, as in an ingest-app that has been running for a while. a is the cold start, comparable with "
                    + "earlier runs of this benchmark.");
            progress("e: %,.0f events/s end to end, warm JVM (%.2fx the cold run a); %s", eventsPerSecond, eventsPerSecond / cold,
                    m.verdict.summary());
            return RuleFigures.of(run, m, featureReads(run));
        }
    }

    /**
     * One rule set's costs in a warm burst (scenarios e and f). The floor of documents per event is the ground truth's
     * distinct main documents in Tally's layout (minutes in their hour up to its bound), each written once;
     * {@code perUnitBucketsPerEvent} is the floor of the layout before minutes nested (a document per unit and bucket),
     * {@code entityDaysPerEvent} the floor if a day document held its hours too (a layout Tally does not have: what it
     * would save, not what it does), {@code entityHoursPerEvent} the floor if every hour held its minutes, unbounded.
     */
    private record RuleFigures(String rulesFile, int rules, double eventsPerSecond, double cpuMicrosPerEvent, double jvmMicrosPerEvent,
                               double appMicrosPerEvent,
                               double endpointMicrosPerEvent, double documentsPerEvent, double entityBucketsPerEvent,
                               double entityDaysPerEvent, double entityHoursPerEvent, double ruPerEvent, double bytesPerEvent,
                               double gradeUpdatesPerEvent, double featureRu, double featureMs, long differing,
                               double perUnitBucketsPerEvent) {
        static RuleFigures of(PipelineRun run, Measured m, double[] feature) {
            double n = m.totals.events();
            double perEvent = m.totals.seconds() * 1e6 / n;
            double jvm = cores(m, p -> p.equals(CpuByPart.PIPELINE));
            // What a deployment's ingest-app process would use: the pipeline less the in-process broker and loadgen,
            // which run elsewhere in production (their other threads, each under 2% of the process, stay in).
            double app = jvm - cores(m, p -> p.startsWith("Kafka broker") || p.equals("loadgen"));
            double endpoint = cores(m, p -> p.startsWith("local Cosmos endpoint"));
            return new RuleFigures(run.rulesFile == null ? "default rules" : run.rulesFile, run.rules().rules().size(),
                    n / m.totals.seconds(), (jvm + endpoint) * perEvent, jvm * perEvent, app * perEvent, endpoint * perEvent, m.totals.documents() / n,
                    distinct(m.truth, Nesting.TALLY) / n, distinct(m.truth, Nesting.HOURS_IN_DAYS) / n,
                    distinct(m.truth, Nesting.MINUTES_IN_HOURS) / n, m.totals.requestUnits() / n, m.requestBytes / n,
                    gradeUpdates(m.truth) / n, feature[0], feature[1], m.verdict.couldNotRead() ? -1 : m.verdict.differing(),
                    distinct(m.truth, Nesting.NONE) / n);
        }

        private static double cores(Measured m, Predicate<String> part) {
            return m.cpu.stream().filter(p -> part.test(p.name())).mapToDouble(CpuByPart.Part::cores).sum();
        }

        /**
         * Where a fine bucket is counted for the floor: in its own document, in the coarser one that would hold it, or
         * where Tally's layout puts it ({@link io.tally.model.EntityBucketLayout}: an unqualified minute in its hour
         * while the hour holds at most its bound of them).
         */
        enum Nesting { NONE, HOURS_IN_DAYS, MINUTES_IN_HOURS, TALLY }

        /**
         * Distinct {@code pk} × unit × bucket among the ground truth's grade buckets ({@code id = grade|unit|index}): the
         * documents a run must write at least once; with a nesting, a fine bucket counts as the coarser one holding it.
         */
        static long distinct(GroundTruth truth, Nesting nesting) {
            Set<String> documents = new HashSet<>();
            truth.buckets().forEach((pk, buckets) -> {
                Map<Long, Integer> minuteGradesByHour = new HashMap<>();
                if (nesting == Nesting.TALLY) {
                    buckets.keySet().forEach(id -> {
                        BucketId b = BucketId.parse(id);
                        if (b.unit() == TimeUnit.MINUTE && !b.grade().contains(":")) {
                            minuteGradesByHour.merge(Math.floorDiv(b.bucketIndex(), 60), 1, Integer::sum);
                        }
                    });
                }
                buckets.keySet().forEach(id -> {
                    BucketId b = BucketId.parse(id);
                    long hour = Math.floorDiv(b.bucketIndex(), 60);
                    if (nesting == Nesting.TALLY && b.unit() == TimeUnit.MINUTE && !b.grade().contains(":")) {
                        documents.add(pk + "|hour|" + hour);
                        if (minuteGradesByHour.get(hour) > io.tally.model.EntityBucketLayout.MAX_INLINE_MINUTE_GRADES) {
                            documents.add(pk + "|minute|" + b.bucketIndex());
                        }
                    } else if (nesting == Nesting.HOURS_IN_DAYS && b.unit() == TimeUnit.HOUR) {
                        documents.add(pk + "|day|" + Math.floorDiv(b.bucketIndex(), 24));
                    } else if (nesting == Nesting.MINUTES_IN_HOURS && b.unit() == TimeUnit.MINUTE) {
                        documents.add(pk + "|hour|" + Math.floorDiv(b.bucketIndex(), 60));
                    } else {
                        documents.add(pk + '|' + b.unit().code() + '|' + b.bucketIndex());
                    }
                });
            });
            return documents.size();
        }

        /** Every grade bucket's count summed: how many (event, grade, unit) updates the run applied. */
        static long gradeUpdates(GroundTruth truth) {
            long[] sum = {0};
            truth.buckets().values().forEach(buckets -> buckets.values().forEach(v -> sum[0] += v.count()));
            return sum[0];
        }

        double perUpdate(double perEvent) {
            return perEvent / gradeUpdatesPerEvent;
        }
    }

    /**
     * Scenario f: scenario e's burst again, warm, under each rule-axis file, and all side by side with e. Warm against
     * warm, so none pays more JIT than another; run a is the cold figure of the default rules.
     */
    private void ruleCount(RuleFigures few) throws Exception {
        List<RuleFigures> axis = new ArrayList<>(List.of(few));
        for (String file : ruleAxis) {
            progress("f. rule count: %,d events under %s on a fresh pipeline (warm JVM)", events, file);
            try (PipelineRun run = new PipelineRun("f", kafka, registry, cosmos, file, settings).start()) {
                int rules = run.rules().rules().size();
                Measured m = measure(run, "f. throughput, warm JVM, " + rules + " rules", "unlimited RU, " + rules + " rules", false);
                burstFigures("f. throughput, warm JVM, " + rules + " rules", m);
                cpuFigures("f. CPU by part, warm JVM, " + rules + " rules, burst until drained", m);
                m.freshnessFigures(this, rules + " rules");
                axis.add(RuleFigures.of(run, m, featureReads(run)));
            }
        }
        String s = "f. rule count";
        for (RuleFigures r : axis) {
            String who = " (" + r.rules + " rules)";
            results.figure(s, "end-to-end throughput" + who, r.eventsPerSecond, "events/s")
                    .figure(s, "grade updates per event" + who, r.gradeUpdatesPerEvent, "updates/event")
                    .figure(s, "CPU µs per event, this JVM and the Cosmos endpoint" + who, r.cpuMicrosPerEvent, "µs/event")
                    .figure(s, "CPU µs per event, this JVM alone (less the benchmark's own threads)" + who, r.jvmMicrosPerEvent, "µs/event")
                    .figure(s, "CPU µs per event, the Cosmos endpoint alone" + who, r.endpointMicrosPerEvent, "µs/event")
                    .figure(s, "CPU µs per grade update, this JVM alone (less the benchmark's own threads)" + who,
                            r.perUpdate(r.jvmMicrosPerEvent), "µs/update")
                    .figure(s, "CPU µs per grade update, ingest-app alone (less the broker's and loadgen's threads too)" + who,
                            r.perUpdate(r.appMicrosPerEvent), "µs/update")
                    .figure(s, "CPU µs per grade update, the Cosmos endpoint alone" + who, r.perUpdate(r.endpointMicrosPerEvent), "µs/update")
                    .figure(s, "bytes sent to Cosmos per grade update" + who, r.perUpdate(r.bytesPerEvent), "bytes/update")
                    .figure(s, "RU per grade update" + who, r.perUpdate(r.ruPerEvent), "RU/update")
                    .figure(s, "documents written per event" + who, r.documentsPerEvent, "docs/event")
                    .figure(s, "floor: distinct documents per event in Tally's layout, ground truth (each written once)" + who, r.entityBucketsPerEvent,
                            "docs/event")
                    .figure(s, "documents written against that floor" + who, r.documentsPerEvent / r.entityBucketsPerEvent, "x")
                    .figure(s, "the floor with a document per unit and bucket (the layout before minutes nested)" + who,
                            r.perUnitBucketsPerEvent, "docs/event")
                    .figure(s, "the floor if a day document held its hours (not Tally's layout)" + who, r.entityDaysPerEvent, "docs/event")
                    .figure(s, "the floor if every hour document held all its minutes, unbounded" + who, r.entityHoursPerEvent,
                            "docs/event")
                    .figure(s, "RU per event" + who, r.ruPerEvent, "RU/event")
                    .figure(s, "bytes sent to Cosmos per event" + who, r.bytesPerEvent, "bytes/event");
            if (r.featureRu >= 0) {
                results.figure(s, "RU per feature-vector read" + who, r.featureRu, "RU/request")
                        .figure(s, "feature-vector read latency, mean" + who, r.featureMs, "ms");
            }
        }
        for (RuleFigures many : axis.subList(1, axis.size())) {
            String vs = " (" + many.rules + " / " + few.rules + " rules)";
            results.figure(s, "ratio, end-to-end throughput" + vs, many.eventsPerSecond / few.eventsPerSecond, "x")
                    .figure(s, "ratio, CPU µs per event" + vs, many.cpuMicrosPerEvent / few.cpuMicrosPerEvent, "x")
                    .figure(s, "ratio, CPU µs per event, this JVM alone" + vs, many.jvmMicrosPerEvent / few.jvmMicrosPerEvent, "x")
                    .figure(s, "ratio, CPU µs per grade update, this JVM alone" + vs,
                            many.perUpdate(many.jvmMicrosPerEvent) / few.perUpdate(few.jvmMicrosPerEvent), "x")
                    .figure(s, "ratio, documents per event" + vs, many.documentsPerEvent / few.documentsPerEvent, "x")
                    .figure(s, "ratio, distinct entity buckets per event (ground truth)" + vs, many.entityBucketsPerEvent / few.entityBucketsPerEvent, "x")
                    .figure(s, "ratio, RU per event" + vs, many.ruPerEvent / few.ruPerEvent, "x");
            progress("f: %d rules %,.0f events/s %.2f RU/event %.2f docs/event (floor %.2f); %d rules %,.0f events/s %.2f RU/event "
                            + "%.2f docs/event (floor %.2f), %.1f grade updates/event, JVM %.1f µs/update; throughput %.2fx, RU %.2fx",
                    few.rules, few.eventsPerSecond, few.ruPerEvent, few.documentsPerEvent, few.entityBucketsPerEvent, many.rules,
                    many.eventsPerSecond, many.ruPerEvent, many.documentsPerEvent, many.entityBucketsPerEvent, many.gradeUpdatesPerEvent,
                    many.perUpdate(many.jvmMicrosPerEvent), many.eventsPerSecond / few.eventsPerSecond, many.ruPerEvent / few.ruPerEvent);
        }
        results.note(String.format(Locale.ROOT, "f: scenario e (%s, %d rules) and the same burst under %s, each on a warm JVM. "
                + "A grade update is one (event, grade, unit) applied: the ground truth's counts summed. Bytes are the request "
                + "bodies the Cosmos endpoint received during the burst. Starting point of the rule-count work (one document per grade "
                + "bucket, ./tally bench end-to-end --quick, cold, one sitting): 4 rules 515 events/s, 2.15 documents and 12.00 RU "
                + "per event; 36 rules 229 events/s, 14.96 documents and 95.63 RU per event. A feature-vector read is %d reads of "
                + "read-service's GET /v1/features/{pk} for the busiest customers at the run's last hour, RU from the endpoint's "
                + "request-charge counter (nothing else runs meanwhile).", few.rulesFile, few.rules,
                String.join(", ", axis.subList(1, axis.size()).stream().map(r -> r.rulesFile + " (" + r.rules + " rules)").toList()),
                FEATURE_READS));
    }

    /**
     * {@link #FEATURE_READS} feature-vector reads through read-service, one after another, for the busiest customers
     * (loadgen's Zipf puts c-0 first) at an instant inside the run's last hour of events: the mean RU (from the
     * endpoint's request-charge counter) and the mean latency.
     */
    private double[] featureReads(PipelineRun run) throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        String at = java.time.Instant.now().minus(Duration.ofMinutes(30)).toString();
        CosmosControl.Stats before = cosmos.control().stats();
        long nanos = 0;
        for (int i = 0; i < FEATURE_READS; i++) {
            String pk = java.net.URLEncoder.encode("bench|c-" + i, java.nio.charset.StandardCharsets.UTF_8);
            java.net.http.HttpRequest req = java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + run.readPort() + "/v1/features/" + pk + "?at=" + at)).build();
            long t0 = System.nanoTime();
            java.net.http.HttpResponse<String> r = http.send(req, java.net.http.HttpResponse.BodyHandlers.ofString());
            nanos += System.nanoTime() - t0;
            if (r.statusCode() != 200) {
                // One slow answer right after a drain (the endpoint is one Node thread holding the whole run's documents)
                // is not worth the run's other figures: say so and leave these two out.
                results.note(String.format(Locale.ROOT, "f (%d rules): feature-vector read %d answered %d, so its RU and latency are "
                        + "left out: %s", run.rules().rules().size(), i + 1, r.statusCode(), r.body()));
                return new double[] {-1, -1};
            }
        }
        double ru = cosmos.control().stats().requestCharge() - before.requestCharge();
        return new double[] {ru / FEATURE_READS, nanos / 1e6 / FEATURE_READS};
    }

    /** A burst's events, events/s, peak backlog and correctness (scenarios a and e); returns the events/s. */
    private double burstFigures(String scenario, Measured m) {
        double eventsPerSecond = m.totals.events() / m.totals.seconds();
        results.figure(scenario, "events end to end", m.totals.events(), "events")
                .figure(scenario, "end-to-end throughput", eventsPerSecond, "events/s")
                .figure(scenario, "peak events waiting for aggregation", m.totals.peakAggregationBacklog(), "events");
        correctnessFigure(scenario, m.verdict);
        return eventsPerSecond;
    }

    private void cpuFigures(String scenario, Measured m) {
        CpuByPart.figures(results, scenario, m.cpu);
    }

    private record Measured(PipelineSampler.Totals totals, GroundTruth truth, Verdict verdict, List<FreshnessProbe.Marker> duringBurst,
                            List<FreshnessProbe.Marker> idle, List<CpuByPart.Part> cpu, long requestBytes) {
        /** Scenario b's figures of this run, after the run's own. */
        void freshnessFigures(EndToEndBench bench, String series) {
            bench.freshnessFigures("b. freshness, " + series + ", during the burst", duringBurst);
            bench.freshnessFigures("b. freshness, " + series + ", idle after it", idle);
        }
    }

    /**
     * Runs the burst through {@code run} with the freshness probe on: waits for the first marker (the
     * pipeline is warm), produces N events, samples until drained, keeps the probe on a little longer
     * (idle freshness), then checks every bucket against loadgen's ground truth.
     */
    private Measured measure(PipelineRun run, String chart, String freshnessSeries, boolean hops) throws Exception {
        FreshnessProbe opened = new FreshnessProbe(kafka.bootstrapServers(), registry, run.topics.transactions(), run.readPort(), run.id,
                run.rules(), PROBE_PER_SECOND);
        if (hops) opened.observeHops(run.repartitionTopic(), run.topics.bucketUpdates(), run.container());
        try (FreshnessProbe probe = opened.start()) {
            probe.awaitFirstVisible(Duration.ofMinutes(3));
            long t0 = System.nanoTime();
            CpuByPart cpu = CpuByPart.start(cosmos.pid());
            long bytesBefore = cosmos.control().stats().requestBytes();
            Future<Loadgen.Summary> producing = background.submit(() -> run.produce(events));
            PipelineSampler.Totals totals = new PipelineSampler(run, results, chart).sampleUntilDrained(producing, DRAIN_TIMEOUT);
            List<CpuByPart.Part> cpuParts = cpu.stop();
            long requestBytes = cosmos.control().stats().requestBytes() - bytesBefore;
            long drainedAt = System.nanoTime();
            Thread.sleep(quick ? 5_000 : 15_000);
            long idleEnd = System.nanoTime();
            probe.stopSending(Duration.ofSeconds(60));
            List<FreshnessProbe.Marker> duringBurst = probe.markersSentBetween(t0, drainedAt);
            List<FreshnessProbe.Marker> idle = probe.markersSentBetween(drainedAt, idleEnd);
            for (FreshnessProbe.Marker mk : probe.markersSentBetween(t0, idleEnd)) {
                if (mk.visibleNanos() > 0) {
                    results.point("b. freshness (produced -> visible through read-service)", freshnessSeries, "ms",
                            (mk.producedNanos() - t0) / 1e9, mk.freshnessMs());
                }
            }
            GroundTruth truth = producing.get().truth().orElseThrow();
            // Again for up to two minutes while some differ: the last writes may still be landing.
            Verdict verdict = run.judge(truth).awaitEqual(run.container(), Duration.ofSeconds(120), Duration.ofSeconds(2));
            if (!verdict.equal()) results.note(run.name + ": " + verdict.describe(3));
            return new Measured(totals, truth, verdict, duringBurst, idle, cpuParts, requestBytes);
        }
    }

    /**
     * How many buckets differ from the ground truth; a container that could not be read (a loaded machine
     * times out TLS handshakes: 503) is said so in a note, never counted as wrong buckets.
     */
    private void correctnessFigure(String scenario, Verdict v) {
        if (v.couldNotRead()) results.note(scenario + ": not judged against the ground truth: " + v.summary());
        else results.figure(scenario, "buckets differing from the ground truth", v.differing(), "buckets");
    }

    private void freshnessFigures(String scenario, List<FreshnessProbe.Marker> markers) {
        List<Double> ms = FreshnessProbe.sortedMs(markers, FreshnessProbe.Hop.SERVED);
        long unseen = markers.size() - ms.size();
        results.figure(scenario, "markers", markers.size(), "events");
        if (!ms.isEmpty()) {
            results.figure(scenario, "p50", percentile(ms, 0.50), "ms")
                    .figure(scenario, "p99", percentile(ms, 0.99), "ms")
                    .figure(scenario, "max", ms.get(ms.size() - 1), "ms");
        }
        if (unseen > 0) results.figure(scenario, "not visible within 60 s after the run", unseen, "events");
        progress("%s: %d markers, p50 %.0f ms, p99 %.0f ms", scenario, markers.size(), ms.isEmpty() ? Double.NaN : percentile(ms, 0.5),
                ms.isEmpty() ? Double.NaN : percentile(ms, 0.99));
    }

    /**
     * Where the idle markers' time went: for each hop, how long after the send it showed them (p50, p99) and
     * the median of what that hop added to the one before.
     */
    private void hopFigures(String scenario, List<FreshnessProbe.Marker> markers) {
        FreshnessProbe.Hop previous = null;
        for (FreshnessProbe.Hop hop : FreshnessProbe.Hop.values()) {
            List<Double> at = FreshnessProbe.sortedMs(markers, hop);
            List<Double> added = new ArrayList<>();
            for (FreshnessProbe.Marker m : markers) {
                double before = previous == null ? 0 : m.atMs(previous);
                double step = m.atMs(hop) - before; // NaN when either hop did not show it
                if (!Double.isNaN(step)) added.add(step);
            }
            added.sort(Double::compare);
            if (at.isEmpty()) {
                results.note(scenario + ": no marker was seen at " + hop.label);
            } else {
                results.figure(scenario, hop.label + ", p50 since produced", percentile(at, 0.5), "ms")
                        .figure(scenario, hop.label + ", p99 since produced", percentile(at, 0.99), "ms");
                if (!added.isEmpty()) results.figure(scenario, hop.label + ", p50 added by this hop", percentile(added, 0.5), "ms");
                progress("%s: %s p50 %.0f ms p99 %.0f ms", scenario, hop.label, percentile(at, 0.5), percentile(at, 0.99));
            }
            previous = hop;
        }
    }

    static double percentile(List<Double> sorted, double q) {
        return sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(q * sorted.size()) - 1));
    }

    /** (event, bucket) pairs of the accepted events: what a sink without any coalescing would write. */
    private static long bucketUpdatesBeforeCoalescing(GroundTruth truth) {
        return truth.buckets().values().stream().flatMap(m -> m.values().stream()).mapToLong(v -> v.count()).sum();
    }

    private static void progress(String format, Object... args) {
        System.out.printf(Locale.ROOT, "[" + NAME + "] " + format + "%n", args);
    }

    /**
     * The SDK logs every throttled bulk batch at ERROR with its full diagnostics, and read-service logs every
     * throttled probe read: under scenario d that is megabytes a second, and its CPU would be measured too.
     */
    static void quietLibraries() {
        for (String logger : List.of("com.azure", "org.apache.kafka", "kafka", "io.netty", "reactor", "io.tally.read")) {
            ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(logger)).setLevel(ch.qos.logback.classic.Level.OFF);
        }
    }
}
