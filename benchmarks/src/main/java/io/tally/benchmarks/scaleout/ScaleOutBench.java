package io.tally.benchmarks.scaleout;

import io.tally.benchmarks.BenchResults;
import io.tally.benchmarks.BenchRun;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.IngestNode;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.pipeline.ScaleOut;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * One ingest-app instance against two on the same workload, then two with one of them killed (SIGKILL)
 * half way: per-instance and total input events/s over time, the moment of the kill and how long the
 * survivor took to own every input partition. Each run takes the same loadgen stream (same seed, sent
 * unpaced once every instance is up) into a fresh pipeline and ends when Cosmos equals the ground truth.
 *
 * <pre>./tally bench scale-out [--quick | EVENTS]</pre>
 * Writes docs/benchmarks/data/scale-out.json. {@code EVENTS} defaults to 40,000; {@code --quick} runs 8,000
 * (a smoke run: the figures are dominated by start-up).
 */
public final class ScaleOutBench {
    static final String CHART = "throughput over time";
    static final String KILL_CHART = "throughput over time, node-b killed";

    private ScaleOutBench() {}

    public static void main(String[] args) throws Exception {
        BenchRun.begin("scale-out");
        int events = args.length == 0 ? 40_000 : args[0].equals("--quick") ? 8_000 : Integer.parseInt(args[0]);
        TestKafka kafka = TestKafka.get();
        LocalSchemaRegistry registry = LocalSchemaRegistry.get();
        LocalCosmos cosmos = LocalCosmos.get();
        BenchRun.begin("scale-out").cosmos(cosmos.control());
        BenchResults results = new BenchResults("scale-out", "Scale-out: one ingest-app instance against two",
                "./tally bench scale-out");
        results.note(String.format(Locale.ROOT, "%,d events (Zipf over 300 customers, 5%% duplicates, 1%% each late, future, "
                + "malformed, invalid) sent as fast as loadgen can once every instance is up; instances run both roles in their own JVMs on "
                + "this one machine, so two instances share its %d cores: the figures show the work moving, not more "
                + "cores. Session timeout 10 s (a killed member's partitions move after it).", events,
                Runtime.getRuntime().availableProcessors()));

        Run one = run(kafka, registry, cosmos, events, 1, false, results, CHART);
        Run two = run(kafka, registry, cosmos, events, 2, false, results, CHART);
        Run killed = run(kafka, registry, cosmos, events, 2, true, results, KILL_CHART);

        for (Run r : List.of(one, two, killed)) {
            results.figure(r.label, "input events/s (drain)", Math.round(events / r.drainSeconds), "events/s");
            results.figure(r.label, "time to Cosmos = truth", round1(r.convergeSeconds), "s");
            r.consumedByInstance.forEach((node, n) -> results.figure(r.label, "input records committed by " + node, n, "records"));
        }
        results.figure(two.label, "throughput vs 1 instance", Math.round(100.0 * one.drainSeconds / two.drainSeconds) / 100.0, "x");
        results.figure(killed.label, "kill at", round1(killed.killAt), "s");
        results.figure(killed.label, "take-over (all input partitions on node-a)", round1(killed.takeover), "s");
        Path file = results.write();
        System.out.printf(Locale.ROOT, "1 instance: %.0f events/s; 2 instances: %.0f events/s (%s); 2 with a kill at %.1f s: "
                        + "%.0f events/s, take-over %.1f s%nwrote %s%n", events / one.drainSeconds, events / two.drainSeconds,
                two.consumedByInstance, killed.killAt, events / killed.drainSeconds, killed.takeover, file);
        System.exit(0);
    }

    private record Run(String label, double drainSeconds, double convergeSeconds, Map<String, Long> consumedByInstance,
                       double killAt, double takeover) {}

    private static Run run(TestKafka kafka, LocalSchemaRegistry registry, LocalCosmos cosmos, int events, int instances,
                           boolean kill, BenchResults results, String chart) throws Exception {
        String label = instances + (instances == 1 ? " instance" : " instances") + (kill ? ", one killed" : "");
        Path dir = Files.createTempDirectory("scale-out");
        try (Pipeline p = new Pipeline("bench" + instances + (kill ? "k" : ""), kafka.bootstrapServers(), registry, cosmos, dir)
                .provisionTopics()) {
            String input = p.topics.transactions();
            List<IngestNode> nodes = new java.util.ArrayList<>();
            // One at a time: instances starting together race to create the Cosmos database, and the loser exits (409).
            for (int i = 0; i < instances; i++) {
                nodes.add(p.start("node-" + (char) ('a' + i), "both", ScaleOut.FAST_FAILOVER));
                p.awaitReady(Pipeline.START_TIMEOUT);
            }

            // Every instance is up before the input arrives, as fast as loadgen sends it. The clock starts with
            // the first input record consumed: JVM and Streams start-up are not throughput.
            java.util.concurrent.CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(p.loadgen(events, 0, 42));
            awaitFirstConsumed(nodes, input);
            long t0 = System.nanoTime();
            // Per-instance rates from the group's committed input offsets, each partition's progress credited to
            // the instance that owns it now: exact and monotonic, unlike per-process client counters.
            Map<Integer, Long> lastCommitted = new HashMap<>();
            Map<String, Long> total = new HashMap<>();
            double killAt = -1, takeover = -1, drained = -1, lastT = 0;
            while (drained < 0) {
                Thread.sleep(1000);
                double t = (System.nanoTime() - t0) / 1e9;
                Map<Integer, Long> committed = committedInput(p, input);
                Map<String, Set<Integer>> owners = safeAssignment(p, input);
                double sum = 0;
                for (IngestNode n : nodes) {
                    long delta = 0;
                    for (int partition : owners.getOrDefault(n.name, Set.of())) {
                        long now = committed.getOrDefault(partition, lastCommitted.getOrDefault(partition, 0L));
                        delta += Math.max(0, now - lastCommitted.getOrDefault(partition, 0L));
                    }
                    total.merge(n.name, delta, Long::sum);
                    double rate = delta / Math.max(0.001, t - lastT);
                    sum += rate;
                    if (n.isAlive()) results.point(chart, label + ": " + n.name, "events/s", round1(t), Math.round(rate));
                }
                // Progress of a partition nobody owns this second (a rebalance) is credited to its next owner.
                owners.values().forEach(parts -> parts.forEach(part -> {
                    if (committed.containsKey(part)) lastCommitted.put(part, committed.get(part));
                }));
                lastT = t;
                if (instances > 1) results.point(chart, label + ": total", "events/s", round1(t), Math.round(sum));
                double consumed = committed.values().stream().mapToLong(Long::longValue).sum();
                if (kill && killAt < 0 && consumed >= events * 0.4) {
                    nodes.get(1).kill();
                    killAt = (System.nanoTime() - t0) / 1e9;
                    results.note(String.format(Locale.ROOT, "%s: node-b SIGKILLed at %.1f s", label, killAt));
                }
                if (killAt >= 0 && takeover < 0) {
                    Map<String, Set<Integer>> owned = safeAssignment(p, input);
                    if (owned.size() == 1 && owned.getOrDefault("node-a", Set.of()).size() == 6) {
                        takeover = (System.nanoTime() - t0) / 1e9 - killAt;
                    }
                }
                if (produced.isDone() && p.aggregationDrained() && (!kill || takeover >= 0)) drained = t;
                if (t > 900) throw new IllegalStateException(label + ": not drained after 900 s; lag " + p.lag(p.appId));
            }
            Duration converge = p.awaitConverged(produced.get(), Duration.ofSeconds(300));
            double convergeSeconds = drained + converge.toMillis() / 1000.0;
            System.err.printf(Locale.ROOT, "%s: drained in %.1f s, Cosmos = truth after %.1f s, consumed %s%n",
                    label, drained, convergeSeconds, total);
            return new Run(label, drained, convergeSeconds, new java.util.TreeMap<>(total), killAt, takeover);
        }
    }

    /** The Streams group's committed offset per input partition (records are 1:1 with offsets: nothing else is written there). */
    private static Map<Integer, Long> committedInput(Pipeline p, String input) {
        Map<Integer, Long> out = new HashMap<>();
        try (org.apache.kafka.clients.admin.Admin admin = p.admin()) {
            admin.listConsumerGroupOffsets(p.appId).partitionsToOffsetAndMetadata().get().forEach((tp, o) -> {
                if (tp.topic().equals(input) && o != null) out.put(tp.partition(), o.offset());
            });
        } catch (Exception e) {
            // a rebalance or a slow broker: no observation this second
        }
        return out;
    }

    private static void awaitFirstConsumed(List<IngestNode> nodes, String input) throws InterruptedException {
        long deadline = System.nanoTime() + Pipeline.START_TIMEOUT.toNanos();
        while (nodes.stream().mapToDouble(n -> n.consumed(input)).sum() == 0) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("no input consumed within " + Pipeline.START_TIMEOUT);
            Thread.sleep(200);
        }
    }

    private static Map<String, Set<Integer>> safeAssignment(Pipeline p, String input) {
        try {
            return ScaleOut.assignment(p, p.appId, input);
        } catch (RuntimeException e) {
            return Map.of();
        }
    }

    private static double round1(double v) {
        return Math.round(v * 10) / 10.0;
    }
}
