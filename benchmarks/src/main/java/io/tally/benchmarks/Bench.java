package io.tally.benchmarks;

import io.tally.benchmarks.cosmos.LocalCosmosBench;
import io.tally.benchmarks.read.ReadCostBench;
import io.tally.benchmarks.read.ReadLatencyBench;
import io.tally.benchmarks.read.ReadServiceBench;
import io.tally.benchmarks.scaleout.ScaleOutBench;
import io.tally.benchmarks.sink.SinkBench;
import io.tally.benchmarks.sink.SinkLatencyBench;
import io.tally.loadgen.LoadgenBenchmark;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The one entry point of the benchmarks: {@code Bench NAME [args]} runs the benchmark NAME in this JVM, {@code Bench
 * report} renders docs/benchmarks.md, {@code Bench --set} prints the end-to-end set one name a line (what
 * {@code ./tally bench} runs, in this order, each in a JVM of its own, before the report), and {@code Bench --help}
 * lists them all. An unknown name is a usage error (exit status 2). Run from the repository root, where the results
 * are written; {@code ./tally bench} builds the classpath and does that:
 *
 * <pre>./tally bench NAME [args]</pre>
 *
 * Every benchmark holds the machine-wide benchmark lock for its whole run ({@link BenchRun}, {@link BenchLock}).
 */
public final class Bench {
    /**
     * What a benchmark is part of: the end-to-end set, the benchmarks whose results the report renders but which run only
     * when named (a scenario too long or too narrow for every ./tally bench), the report, or the older pages of one stage each.
     */
    enum Kind { SET, ALONE, REPORT, STAGE }

    /** A benchmark's main, which may end the JVM (most do, with their exit status). */
    @FunctionalInterface
    interface Main {
        void run(String[] args) throws Exception;
    }

    /**
     * @param title what it measures; for the set also its section title in docs/benchmarks.md
     * @param usage its arguments after the name
     */
    record Benchmark(String name, Kind kind, String usage, String title, Main main) {}

    /** Every benchmark, the end-to-end set first in the order ./tally bench runs and the report shows it. */
    static final List<Benchmark> ALL = List.of(
            new Benchmark(EndToEndBench.NAME, Kind.SET, "[--quick] [--events=N] [--rules=FILE] [--rule-axis=FILE[,FILE...]|none] [--with=KEY=VALUE...]",
                    "End to end: throughput, freshness, documents and RU per event, RU budget", EndToEndBench::main),
            new Benchmark(FreshnessCostBench.NAME, Kind.SET, "[--quick] [--rate=N]",
                    "Freshness against cost at 0.25 / 1 / 5 / 30 s", FreshnessCostBench::main),
            new Benchmark("sink-latency", Kind.SET, "[--quick | UPDATES [NAIVE_SECONDS [DELAYS_MS [ROUNDS]]]]",
                    "Sink under added Cosmos latency (0/2/10/50 ms)", SinkLatencyBench::main),
            new Benchmark("read-latency", Kind.SET, "[--quick | RATES [SECONDS [DELAYS_MS]]]",
                    "Read latencies at 3,000 req/s", ReadLatencyBench::main),
            new Benchmark("scale-out", Kind.SET, "[EVENTS | --quick]", "Scale-out: two instances", ScaleOutBench::main),
            new Benchmark(BackfillBench.NAME, Kind.ALONE, "[--quick] [--events=N] [--rate=N] [--with=KEY=VALUE...]",
                    "Rules change: backfilling one new grade against a full rebuild, live freshness meanwhile", BackfillBench::main),
            new Benchmark("report", Kind.REPORT, "",
                    "docs/benchmarks.md and its plots from docs/benchmarks/data/*.json; runs no benchmark", BenchReport::main),
            new Benchmark("local-cosmos", Kind.STAGE, "[quick]",
                    "the local Cosmos endpoint through the SDK: bulk upsert, query, a throttled bulk load", LocalCosmosBench::main),
            new Benchmark("loadgen", Kind.STAGE, "[--bench.runs=4] [--bench.partitions=6] [--bench.output=FILE] [--loadgen.*=...]",
                    "loadgen's producing rate against a running Kafka and schema registry (./tally starts the local stack's)",
                    args -> LoadgenBenchmark.main(args.length == 0 ? new String[] {"--loadgen.events=1000000"} : args)),
            new Benchmark("aggregation", Kind.STAGE, "[EVENTS]",
                    "the aggregation's events/s against a plain exactly-once count (default 300000 events)",
                    args -> AggregationBench.main(new String[] {args.length > 0 ? args[0] : "300000", "docs/benchmarks/aggregation.md"})),
            new Benchmark("sink", Kind.STAGE, "[UPDATES [BACKLOG]]",
                    "the sink against a naive upsert-per-record writer, and its heap under a backlog", SinkBench::main),
            new Benchmark("sink-heap", Kind.STAGE, "[DOCUMENTS]",
                    "the heap the sink holds per document waiting to be written, against the estimate sink.window.max-bytes bounds; "
                            + "the CPU of a close beside held history buckets",
                    io.tally.benchmarks.sink.SinkHeapBench::main),
            new Benchmark("read-cost", Kind.STAGE, "",
                    "request units and latency of a point read, a range and a feature vector, per grade documents against entity "
                            + "buckets, at the default and the many rules (docs/benchmarks/read-cost.md)", ReadCostBench::main),
            new Benchmark("read-service", Kind.STAGE, "",
                    "read-service's latencies next to the raw SDK call (-Dbench.rate, -Dbench.seconds, -Dbench.entities); "
                            + "its table goes to benchmarks/target/read-service-bench.md", ReadServiceBench::main));

    private Bench() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.print(usage());
            return;
        }
        if (args.length == 1 && args[0].equals("--set")) {
            set().forEach(b -> System.out.println(b.name()));
            return;
        }
        Optional<Benchmark> benchmark = args.length == 0 ? Optional.empty() : find(args[0]);
        if (benchmark.isEmpty()) {
            usageError(System.err, args.length == 0 ? "no benchmark named" : "unknown benchmark '" + args[0] + "'");
            System.exit(2);
        }
        benchmark.get().main().run(Arrays.copyOfRange(args, 1, args.length));
    }

    static Optional<Benchmark> find(String name) {
        return ALL.stream().filter(b -> b.name().equals(name)).findFirst();
    }

    /** The end-to-end set, in the order it runs and the report shows it. */
    static List<Benchmark> set() {
        return ALL.stream().filter(b -> b.kind() == Kind.SET).toList();
    }

    static String names() {
        return ALL.stream().map(Benchmark::name).collect(Collectors.joining(", "));
    }

    private static void usageError(PrintStream err, String problem) {
        err.println(problem + " (one of: " + names() + ")");
        err.println();
        err.print(usage());
    }

    static String usage() {
        StringBuilder out = new StringBuilder("Usage: ./tally bench NAME [args]   (java ... io.tally.benchmarks.Bench NAME [args], "
                + "from the repository root)\n       ./tally bench [--quick]   (the end-to-end set, then the report)\n");
        section(out, "The end-to-end set, in the order ./tally bench runs it; each writes docs/benchmarks/data/NAME.json:", Kind.SET);
        section(out, "Run only when named, not by ./tally bench; each writes docs/benchmarks/data/NAME.json for the report:", Kind.ALONE);
        section(out, "The report:", Kind.REPORT);
        section(out, "Single-stage benchmarks, their pages in docs/benchmarks/NAME.md:", Kind.STAGE);
        return out.toString();
    }

    private static void section(StringBuilder out, String heading, Kind kind) {
        out.append('\n').append(heading).append('\n');
        for (Benchmark b : ALL) {
            if (b.kind() != kind) continue;
            out.append(String.format(Locale.ROOT, "  %-14s %s%n", b.name(), b.title()));
            if (!b.usage().isEmpty()) out.append(String.format(Locale.ROOT, "  %-14s   args: %s%n", "", b.usage()));
        }
    }
}
