package io.tally.loadgen;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Setting;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Loadgen → Kafka alone, in events/s, reproducible with one command (see docs/benchmarks/loadgen.md):
 *
 * <pre>{@code
 * ./mvnw -q -DskipTests package -pl loadgen -am
 * java -Xmx2g -cp loadgen/target/loadgen.jar io.tally.loadgen.LoadgenBenchmark --loadgen.events=1000000
 * }</pre>
 *
 * Each variant (loadgen's defaults; defaults without the ground truth; lz4 with larger batches, without the
 * ground truth) runs {@code bench.runs} times in this JVM, each run into a fresh topic that is created,
 * awaited (every partition led: KAFKA-15591) and deleted afterwards, so the broker is left as found. Any
 * {@code loadgen.*} or {@code kafka.*} flag applies to every run. Results go to stdout and to
 * {@code bench.output} with the machine, the command and every run, so the noise is visible.
 */
public final class LoadgenBenchmark {
    static final Setting<Integer> RUNS = Setting.integer("bench.runs", 4, "Runs per variant.").atLeast(1);
    static final Setting<Integer> PARTITIONS = Setting.integer("bench.partitions", 6,
            "Partitions of each run's topic (the transactions topic of the local stack has 6).").atLeast(1);
    static final Setting<String> OUTPUT = Setting.string("bench.output", "docs/benchmarks/loadgen.md",
            "Markdown report to write (none = stdout only).");

    static final String TOPIC_PREFIX = "loadgen-bench-";

    /** Throughput tuning loadgen does NOT apply by default (see CheckedSender): measured here for comparison. */
    static final Map<String, String> TUNED_PRODUCER = Map.of("compression.type", "lz4", "linger.ms", "10",
            "batch.size", "262144");

    private record Variant(String name, List<String> extraFlags) {}

    private record Result(String variant, int run, long records, double seconds, double rate, String load) {}

    private LoadgenBenchmark() {}

    public static void main(String[] args) throws Exception {
        List<Setting<?>> declared = new ArrayList<>(LoadgenSettings.ALL);
        declared.addAll(List.of(RUNS, PARTITIONS, OUTPUT));
        Config c;
        try {
            c = Config.load(declared, List.of("kafka."), args, System.getenv());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        List<String> loadgenArgs = new ArrayList<>();
        for (String a : args) if (!a.startsWith("--bench.")) loadgenArgs.add(a);
        String bootstrap = c.get(LoadgenSettings.BOOTSTRAP);
        List<Variant> variants = List.of(
                new Variant("A: loadgen defaults (producer stock: no compression, linger 5 ms, 16 KiB batches), ground truth on",
                        List.of()),
                new Variant("B: defaults, ground truth off", List.of("--loadgen.ground-truth-file=none")),
                new Variant("C: lz4, linger 10 ms, 256 KiB batches, ground truth off", java.util.stream.Stream.concat(
                        TUNED_PRODUCER.entrySet().stream().map(e -> "--kafka." + e.getKey() + "=" + e.getValue()),
                        java.util.stream.Stream.of("--loadgen.ground-truth-file=none")).toList()));
        List<Result> results = new ArrayList<>();
        Path truthDir = Files.createTempDirectory("loadgen-bench");
        try (Admin admin = admin(bootstrap)) {
            // Topics of an earlier, interrupted benchmark: the broker is to be left as it was found.
            List<String> stale = admin.listTopics().names().get().stream().filter(t -> t.startsWith(TOPIC_PREFIX)).toList();
            if (!stale.isEmpty()) admin.deleteTopics(stale).all().get();
            for (Variant v : variants) {
                for (int run = 1; run <= c.get(RUNS); run++) {
                    String topic = TOPIC_PREFIX + UUID.randomUUID().toString().substring(0, 8);
                    try {
                        createTopic(admin, bootstrap, topic, c.get(PARTITIONS));
                        List<String> a = new ArrayList<>(loadgenArgs);
                        a.add("--loadgen.topic=" + topic);
                        a.add("--loadgen.progress.interval.ms=0");
                        a.add("--loadgen.ground-truth-file=" + truthDir.resolve("truth.json"));
                        a.addAll(v.extraFlags()); // later flags win
                        LoadgenSettings s = LoadgenSettings.load(a.toArray(String[]::new), System.getenv());
                        System.gc(); // start each run with the previous run's ground truth collected
                        Loadgen.Summary sum = Loadgen.run(s);
                        if (sum.failed() > 0) throw new IllegalStateException(sum.failed() + " records not acknowledged");
                        Result r = new Result(v.name(), run, sum.acknowledged(), sum.elapsed().toNanos() / 1e9, sum.ratePerSecond(),
                                loadAverage());
                        results.add(r);
                        System.out.printf(Locale.ROOT, "%s, run %d: %,d records in %.2f s = %,.0f rec/s%n", v.name(), run,
                                r.records(), r.seconds(), r.rate());
                    } finally {
                        admin.deleteTopics(List.of(topic)).all().get();
                    }
                }
            }
        }
        String report = report(args, c.get(PARTITIONS), variants, results);
        System.out.println();
        System.out.print(report);
        if (!c.get(OUTPUT).equalsIgnoreCase(LoadgenSettings.NONE)) {
            Path out = Path.of(c.get(OUTPUT));
            if (out.toAbsolutePath().getParent() != null) Files.createDirectories(out.toAbsolutePath().getParent());
            Files.writeString(out, report);
            System.out.println("written to " + out);
        }
    }

    private static String report(String[] args, int partitions, List<Variant> variants, List<Result> results) throws IOException {
        StringBuilder sb = new StringBuilder();
        sb.append("# Benchmark: loadgen → Kafka\n\n");
        sb.append("Generated by `io.tally.loadgen.LoadgenBenchmark` on ").append(Instant.now()).append(". Reproduce:\n\n```\n")
                .append("local/stack.sh up kafka registry\n./mvnw -q -DskipTests package -pl loadgen -am\n")
                .append("java -Xmx2g -cp loadgen/target/loadgen.jar io.tally.loadgen.LoadgenBenchmark ")
                .append(String.join(" ", args)).append("\n```\n\n");
        sb.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ")
                .append(memTotal()).append(" memory, Java ").append(System.getProperty("java.vm.version")).append(" (")
                .append(System.getProperty("java.vm.vendor")).append("), ").append(System.getProperty("os.name")).append(' ')
                .append(System.getProperty("os.arch")).append(", max heap ").append(Runtime.getRuntime().maxMemory() >> 20)
                .append(" MiB. Broker: the local stack's single KRaft node on the same machine, topic with ")
                .append(partitions).append(" partitions, replication 1. Each run is one `Loadgen.run` in the same JVM "
                        + "(run 1 includes JIT warm-up), idempotent producer, acks=all, every result checked.\n\n");
        sb.append("| variant | run | records | seconds | records/s | load avg 1/5/15 min after the run |\n|---|---|---|---|---|---|\n");
        for (Result r : results) {
            sb.append(String.format(Locale.ROOT, "| %s | %d | %,d | %.2f | %,.0f | %s |%n", r.variant(), r.run(), r.records(),
                    r.seconds(), r.rate(), r.load()));
        }
        sb.append("\n| variant | mean records/s (runs 2..n) | min | max | spread (max-min)/mean |\n|---|---|---|---|---|\n");
        Map<String, List<Double>> byVariant = new LinkedHashMap<>();
        for (Variant v : variants) byVariant.put(v.name(), new ArrayList<>());
        for (Result r : results) if (r.run() > 1 || results.stream().filter(x -> x.variant().equals(r.variant())).count() == 1) {
            byVariant.get(r.variant()).add(r.rate());
        }
        byVariant.forEach((name, rates) -> {
            double mean = rates.stream().mapToDouble(Double::doubleValue).average().orElse(0);
            double min = rates.stream().mapToDouble(Double::doubleValue).min().orElse(0);
            double max = rates.stream().mapToDouble(Double::doubleValue).max().orElse(0);
            sb.append(String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | %,.0f | %.0f%% |%n", name, mean, min, max,
                    mean == 0 ? 0 : 100 * (max - min) / mean));
        });
        return sb.toString();
    }

    /** The machine's load average: other work on the same cores is the main source of noise here. */
    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " / " + f[1] + " / " + f[2];
        } catch (IOException | RuntimeException e) {
            return "n/a";
        }
    }

    private static String memTotal() throws IOException {
        Path meminfo = Path.of("/proc/meminfo");
        if (!Files.exists(meminfo)) return "unknown";
        for (String line : Files.readAllLines(meminfo)) {
            if (line.startsWith("MemTotal:")) {
                long kb = Long.parseLong(line.replaceAll("\\D", ""));
                return String.format(Locale.ROOT, "%.1f GiB", kb / 1024.0 / 1024.0);
            }
        }
        return "unknown";
    }

    private static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(p);
    }

    /**
     * Creates the topic, waits until every partition has a leader, then writes one probe record to each
     * partition with a plain (non-idempotent) producer. Waiting for leaders alone was not enough here: the
     * first benchmark attempt hit KAFKA-15591 on a fresh topic (NOT_LEADER_OR_FOLLOWER, then
     * OUT_OF_ORDER_SEQUENCE_NUMBER until the delivery timeout; loadgen reported the lost records and failed).
     * A non-idempotent producer has no sequence numbers to get out of order, and once every partition took a
     * write the idempotent run starts on a settled leader.
     */
    private static void createTopic(Admin admin, String bootstrap, String topic, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                if (d.partitions().stream().map(TopicPartitionInfo::leader).allMatch(l -> l != null && !l.isEmpty())) break;
            } catch (ExecutionException notYet) {
                // metadata not propagated yet
            }
            if (System.nanoTime() > deadline) throw new IllegalStateException("no leaders for " + topic + " after 30 s");
            Thread.sleep(100);
        }
        Map<String, Object> p = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        try (KafkaProducer<byte[], byte[]> probe = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < partitions; i++) probe.send(new ProducerRecord<>(topic, i, null, new byte[0])).get();
        }
    }
}
