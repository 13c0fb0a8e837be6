package io.tally.benchmarks;

import io.tally.ingest.freshness.FreshnessTarget;
import io.tally.loadgen.LoadgenSettings;
import io.tally.loadgen.rules.RuleEvaluator;
import io.tally.loadgen.rules.RuleSet;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The curve between freshness and Cosmos cost: the same live workload at a fixed rate through a fresh
 * pipeline at each freshness target ({@code ingest.freshness-target.ms}), measuring documents and request
 * units per event and the freshness p99 (produced -> served by read-service, with the hop that took it), and
 * the ideal to hold them against: each entity bucket (the document holding an entity's grades of one unit and
 * bucket) written once per target-long window in which it changed,
 * computed from the records on the transactions topic with loadgen's own rule evaluation (an implementation
 * that shares no code with ingest-app). Writes docs/benchmarks/data/freshness-cost.json.
 *
 * <p>Live workload: loadgen's defaults (Zipf over 10,000 customers, 500 SKUs) with event times spread over the
 * run itself instead of the last 48 hours, no duplicates or bad records (so every record counts once and the
 * ideal needs no dedupe), at a fixed rate the pipeline keeps up with.
 *
 * <pre>./tally bench freshness-cost [--quick] [--rate=N] [--targets=MS,MS,...]</pre>
 * (--quick: 0.25 s and 5 s only, 20 s each; --targets: those targets only, in milliseconds.)
 */
public final class FreshnessCostBench {
    static final String NAME = "freshness-cost";
    private static final int PROBE_PER_SECOND = 20;
    private static final String COST_CHART = "cost by freshness target: documents per event";
    private static final String RU_CHART = "cost by freshness target: request units per event";
    private static final String FRESHNESS_CHART = "freshness p99 by freshness target";

    private final boolean quick;
    private final int rate;
    private final java.util.Optional<List<Duration>> chosen;
    private final TestKafka kafka;
    private final String registry;
    private final LocalCosmos cosmos;
    private final BenchResults results;
    private final ExecutorService background = Executors.newCachedThreadPool();

    private FreshnessCostBench(boolean quick, int rate, java.util.Optional<List<Duration>> chosen) {
        this.quick = quick;
        this.rate = rate;
        this.chosen = chosen;
        this.kafka = TestKafka.get();
        this.registry = LocalSchemaRegistry.get().url();
        this.cosmos = LocalCosmos.startPrivate();
        BenchRun.begin(NAME).cosmos(cosmos.control());
        this.results = new BenchResults(NAME, "Freshness against cost: documents and RU per event at each freshness target",
                "./tally bench " + NAME + (quick ? " --quick" : "") + (rate != 1000 ? " --rate=" + rate : "")
                        + chosen.map(t -> " --targets=" + t.stream().map(d -> Long.toString(d.toMillis())).collect(java.util.stream.Collectors.joining(",")))
                        .orElse(""));
    }

    public static void main(String[] args) throws Exception {
        BenchRun.begin(NAME);
        boolean quick = Arrays.asList(args).contains("--quick");
        int rate = Arrays.stream(args).filter(a -> a.startsWith("--rate=")).map(a -> Integer.parseInt(a.substring(7)))
                .findFirst().orElse(1000);
        java.util.Optional<List<Duration>> targets = Arrays.stream(args).filter(a -> a.startsWith("--targets=")).findFirst()
                .map(a -> Arrays.stream(a.substring(10).split(",")).map(ms -> Duration.ofMillis(Long.parseLong(ms.trim()))).toList());
        EndToEndBench.quietLibraries();
        try {
            new FreshnessCostBench(quick, rate, targets).run();
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private void run() throws Exception {
        List<Duration> targets = chosen.isPresent() ? chosen.get() : quick ? List.of(Duration.ofMillis(250), Duration.ofSeconds(5))
                : List.of(Duration.ofMillis(250), Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(30));
        results.note(String.format(Locale.ROOT, "Each target on a fresh pipeline (ingest-app with both roles and read-service at their "
                + "defaults but for ingest.freshness-target.ms; broker in-process, a private local Cosmos endpoint whose RU are its model, "
                + "local/cosmos/README.md): loadgen at %,d events/s, event times spread over the run itself (live), Zipf over 10,000 "
                + "customers and 500 SKUs, no duplicates or bad records, plus the freshness probe's %d markers/s; each run lasts the "
                + "longer of %d s and four targets.", rate, PROBE_PER_SECOND, seconds(Duration.ZERO)));
        results.note("Ideal: each entity bucket (one document per entity, unit and bucket) written once per target-long window (from the first event) in which it changed, counted "
                + "from the records on the transactions topic with loadgen's rule evaluation; its RU per event is the ideal's documents "
                + "times Tally's own RU per document at that target. Freshness: markers sent from 10 s into the run until its end.");
        results.xAxis(COST_CHART, "freshness target (s)", true).xAxis(RU_CHART, "freshness target (s)", true)
                .xAxis(FRESHNESS_CHART, "freshness target (s)", true);
        try {
            for (Duration target : targets) point(target);
        } catch (Exception e) {
            results.note("This run stopped early: " + e);
            progress("wrote %s (incomplete)", results.write());
            throw e;
        }
        progress("wrote %s", results.write());
        background.shutdownNow();
    }

    private int seconds(Duration target) {
        int floor = quick ? 20 : 60;
        return (int) Math.max(floor, 4 * target.toSeconds());
    }

    /** One point of the curve: a fresh pipeline at {@code target}, the live workload through it, then drained. */
    private void point(Duration target) throws Exception {
        String scenario = String.format(Locale.ROOT, "target %s s", trim(target.toMillis() / 1000.0));
        FreshnessTarget knob = new FreshnessTarget(target);
        int seconds = seconds(target);
        long events = (long) rate * seconds;
        progress("%s: commit interval %d ms, flush window %d ms; %,d events over %d s", scenario, knob.commitInterval().toMillis(),
                knob.flushWindow().toMillis(), events, seconds);
        try (PipelineRun run = new PipelineRun("f" + target.toMillis(), kafka, registry, cosmos, null,
                "--ingest.freshness-target.ms=" + target.toMillis()).start();
             FreshnessProbe probe = new FreshnessProbe(kafka.bootstrapServers(), registry, run.topics.transactions(), run.readPort(),
                     run.id, run.rules(), PROBE_PER_SECOND).observeHops(run.repartitionTopic(), run.topics.bucketUpdates(), run.container()).start()) {
            probe.awaitFirstVisible(Duration.ofMinutes(3));
            double docs0 = run.documentsWritten();
            double ru0 = run.requestUnits();
            double updates0 = run.sinkCounter("tally.sink.updates.consumed", null);
            Instant start = Instant.now();
            long t0 = System.nanoTime();
            Future<?> producing = background.submit(() -> run.produce(events, "--loadgen.rate=" + rate,
                    "--loadgen.start=" + start.truncatedTo(ChronoUnit.SECONDS), "--loadgen.window.ms=" + seconds * 1000L,
                    "--loadgen.duplicate.fraction=0", "--loadgen.late.fraction=0", "--loadgen.future.fraction=0",
                    "--loadgen.malformed.fraction=0", "--loadgen.invalid.fraction=0"));
            producing.get();
            long produced = System.nanoTime();
            probe.stopSending(Duration.ofSeconds(60).plus(target.multipliedBy(2)));
            while (run.outstanding() != null) Thread.sleep(200);

            Ideal ideal = ideal(run, start.toEpochMilli(), target);
            double docs = run.documentsWritten() - docs0;
            double ru = run.requestUnits() - ru0;
            double updates = run.sinkCounter("tally.sink.updates.consumed", null) - updates0;
            double x = target.toMillis() / 1000.0;
            double ruPerDoc = ru / docs;
            results.figure(scenario, "events (loadgen and probe markers)", ideal.events, "events")
                    .figure(scenario, "bucket updates emitted per event (aggregation)", updates / ideal.events, "updates/event")
                    .figure(scenario, "documents written per event (sink)", docs / ideal.events, "docs/event")
                    .figure(scenario, "ideal documents per event", ideal.documents / (double) ideal.events, "docs/event")
                    .figure(scenario, "documents / ideal", docs / ideal.documents, "x")
                    .figure(scenario, "RU per event", ru / ideal.events, "RU/event")
                    .figure(scenario, "ideal RU per event (ideal documents x Tally's RU per document)",
                            ruPerDoc * ideal.documents / ideal.events, "RU/event");
            results.point(COST_CHART, "Tally sink", "docs/event", x, docs / ideal.events)
                    .point(COST_CHART, "aggregation output (bucket-updates)", "docs/event", x, updates / ideal.events)
                    .point(COST_CHART, "ideal: each bucket once per window it changed in", "docs/event", x,
                            ideal.documents / (double) ideal.events)
                    .point(RU_CHART, "Tally sink", "RU/event", x, ru / ideal.events)
                    .point(RU_CHART, "ideal", "RU/event", x, ruPerDoc * ideal.documents / ideal.events);
            freshness(scenario, x, probe.markersSentBetween(t0 + 10_000_000_000L, produced));
            progress("%s: %.2f docs/event (ideal %.2f), %.2f RU/event", scenario, docs / ideal.events,
                    ideal.documents / (double) ideal.events, ru / ideal.events);
        }
    }

    private void freshness(String scenario, double x, List<FreshnessProbe.Marker> markers) {
        List<Double> served = FreshnessProbe.figures(results, scenario, markers);
        if (served.isEmpty()) return;
        results.point(FRESHNESS_CHART, "Tally p99", "ms", x, EndToEndBench.percentile(served, 0.99))
                .point(FRESHNESS_CHART, "the target", "ms", x, x * 1000);
    }

    private record Ideal(long events, long documents) {}

    /**
     * Reads the run's transactions topic: each record from {@code fromMillis} on is an event, and each entity bucket
     * it counts for is a write in its {@code target}-long window (the record timestamp's), once per window.
     */
    private Ideal ideal(PipelineRun run, long fromMillis, Duration target) throws Exception {
        RuleEvaluator rules = new RuleEvaluator(RuleSet.load(Path.of(LoadgenSettings.RULES_FILE.defaultValue().orElseThrow())));
        AvroDeserializer<TransactionEvent> decode = new AvroDeserializer<>(new SchemaRegistryClient(registry), TransactionEvent.getClassSchema());
        String topic = run.topics.transactions();
        Set<String> writes = new HashSet<>();
        long[] events = {0};
        run.readInput(r -> {
            if (r.timestamp() < fromMillis) return;
            events[0]++;
            long window = (r.timestamp() - fromMillis) / target.toMillis();
            rules.evaluate(decode.deserialize(topic, r.value()), Instant.ofEpochMilli(r.timestamp()),
                    // one document per entity, unit and bucket holds all its grades: it is what a write writes
                    (bucket, value) -> writes.add(bucket.pk() + '|' + bucket.unit().code() + '|' + bucket.index() + '#' + window));
        });
        return new Ideal(events[0], writes.size());
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    private static void progress(String format, Object... args) {
        System.out.printf(Locale.ROOT, "[" + NAME + "] " + format + "%n", args);
    }
}
