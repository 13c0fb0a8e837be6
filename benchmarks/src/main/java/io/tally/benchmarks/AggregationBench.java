package io.tally.benchmarks;

import io.tally.ingest.app.AggregationSettings;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.freshness.FreshnessTarget;
import io.tally.rules.GradeRules;
import io.tally.ingest.source.SourceTopics;
import io.tally.ingest.topology.CommitPace;
import io.tally.ingest.topology.TallyTopology;
import io.tally.ingest.topology.TopologySettings;
import io.tally.loadgen.Loadgen;
import io.tally.loadgen.LoadgenSettings;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.RegistryClientSettings;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Events/s from {@code transactions} to {@code bucket-updates} with the default rules over a Zipf
 * workload, against the ceiling of Kafka Streams on the same machine in the same run: a plain
 * exactly_once_v2 count per key over the same input. Both are timed from RUNNING until their group
 * has committed every input (and repartition) record.
 *
 * <pre>./tally bench aggregation [EVENTS]</pre>
 * (default 300,000 events; writes docs/benchmarks/aggregation.md.) The rule count is an axis: after the warm round,
 * Tally runs once more over the same input under {@link #MANY_RULES} (36 rules, 5 entity fields), and the report
 * sets the two side by side (-Dbench.many-rules=FILE for another file, =none to skip).
 * Uses KAFKA_BOOTSTRAP_SERVERS when set (for example the local stack's broker), else an in-process broker.
 */
public final class AggregationBench {
    public static void main(String[] args) throws Exception {
        BenchRun machine = BenchRun.begin("aggregation");
        int events = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
        Path out = args.length > 1 ? Path.of(args[1]) : null;
        TestKafka kafka = TestKafka.get();
        String registry = LocalSchemaRegistry.get().url();
        String prefix = "bench-" + UUID.randomUUID().toString().substring(0, 8) + ".";
        Topics.Names topics = Topics.Names.withPrefix(prefix);
        kafka.createTopics(Topics.specs(topics).stream().map(s -> TestKafka.topic(s.name(), s.partitions(), s.configs())).toList());

        System.err.printf("producing %,d events (Zipf over 100,000 customers, default rules)...%n", events);
        Loadgen.Summary produced = Loadgen.run(LoadgenSettings.load(new String[] {
                "--kafka.bootstrap.servers=" + kafka.bootstrapServers(), "--schema.registry.url=" + registry,
                "--loadgen.topic=" + topics.transactions(), "--loadgen.events=" + events, "--loadgen.rate=0",
                "--loadgen.customers=100000", "--loadgen.ground-truth-file=none"}, Map.of()));
        if (produced.failed() > 0) throw new IllegalStateException(produced.failed() + " events not acknowledged");

        // Two rounds over the same input, each topology under a fresh application id and into fresh outputs: the
        // first runs on a cold JVM (JIT compilation takes a core for most of it on 2 cores), the second is the
        // steady state a long-running instance sees. The ratio is taken from the second round.
        List<String> rows = new ArrayList<>();
        List<String> threadRows = new ArrayList<>();
        Result ceiling = null, tally = null;
        for (String round : List.of("cold", "warm")) {
            Topics.Names roundTopics = new Topics.Names(topics.transactions(), prefix + round + ".transactions.dlq",
                    prefix + round + ".bucket-updates", prefix + round + ".bucket-updates.dlq");
            kafka.createTopics(Topics.specs(roundTopics).stream().filter(s -> !s.name().equals(roundTopics.transactions()))
                    .map(s -> TestKafka.topic(s.name(), s.partitions(), s.configs())).toList());
            kafka.createTopics(List.of(TestKafka.topic(prefix + round + ".counts", 6, Map.of())));
            ceiling = run("count-per-key (" + round + ")", kafka, countPerKey(topics, prefix + round + ".counts"),
                    prefix + round + "-ceiling", 6, List.of(prefix + round + ".counts"));
            // 6 input + 6 repartition partitions: both sub-topologies must have caught up.
            tally = run("tally (" + round + ")", kafka, tallyTopology(roundTopics, registry, PACE), prefix + round + "-tally", 12,
                    List.of(roundTopics.bucketUpdates()), TALLY_DEFAULTS);
            rows.add(ceiling.row(events));
            rows.add(tally.row(events));
            threadRows.add(ceiling.thread().row(ceiling.name(), events));
            threadRows.add(tally.thread().row(tally.name(), events));
        }
        double ratio = (events / tally.seconds()) / (events / ceiling.seconds());
        String ruleCount = ruleCountSection(kafka, registry, topics, prefix, events, tally, rows, threadRows);
        // The knobs between throughput and freshness, each alone against the warm round above (-Dbench.variants=false skips).
        List<String> variants = new ArrayList<>();
        if (Boolean.parseBoolean(System.getProperty("bench.variants", "true"))) {
            Map<String, Map<String, Object>> knobs = new java.util.LinkedHashMap<>();
            // one interval for keeping up and backlog alike (no commits asked for by the aggregation)
            knobs.put("one commit interval, 166 ms (before ingest.backlog.commit-interval.ms)",
                    with(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, INGEST_DEFAULTS.commitInterval().toMillis()));
            knobs.put("one commit interval, 1 s (the default before ingest.freshness-target.ms)", with(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1000));
            knobs.put("one commit interval, 5 s", with(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 5000));
            knobs.put("2 stream threads", with(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2));
            knobs.put("producer batches 16 KB, linger 100 ms (Kafka Streams' defaults)", with(StreamsConfig.producerPrefix("batch.size"),
                    16 * 1024, StreamsConfig.producerPrefix("linger.ms"), 100));
            knobs.put("consumer fetches up to 1 MB per partition (Kafka's default)", with(StreamsConfig.consumerPrefix("max.partition.fetch.bytes"),
                    1 << 20));
            int i = 0;
            for (var knob : knobs.entrySet()) {
                String v = "v" + i++;
                Topics.Names vt = new Topics.Names(topics.transactions(), prefix + v + ".transactions.dlq", prefix + v + ".bucket-updates",
                        prefix + v + ".bucket-updates.dlq");
                kafka.createTopics(Topics.specs(vt).stream().filter(t -> !t.name().equals(vt.transactions()))
                        .map(t -> TestKafka.topic(t.name(), t.partitions(), t.configs())).toList());
                boolean oneInterval = knob.getKey().startsWith("one commit interval");
                Result r = run("tally, " + knob.getKey(), kafka, tallyTopology(vt, registry, oneInterval ? CommitPace.NONE : PACE),
                        prefix + v + "-tally", 12, List.of(vt.bucketUpdates()), knob.getValue());
                threadRows.add(r.thread().row(r.name(), events));
                variants.add(r.row(events) + String.format(Locale.ROOT, " %.2f |", r.seconds() > 0 ? tally.seconds() / r.seconds() : 0));
            }
        }
        // The ceiling given ingest-app's consumer fetch size too, so the ratio is also stated against a ceiling with the
        // same consumer (8 MB fetches help a plain count as well).
        kafka.createTopics(List.of(TestKafka.topic(prefix + "fetch.counts", 6, Map.of())));
        String fetchKey = StreamsConfig.consumerPrefix("max.partition.fetch.bytes");
        Result fetchCeiling = run("count-per-key (warm), consumer fetches up to 8 MB per partition", kafka,
                countPerKey(topics, prefix + "fetch.counts"), prefix + "fetch-ceiling", 6, List.of(prefix + "fetch.counts"),
                Map.of(fetchKey, APP_DEFAULTS.get(fetchKey)));
        threadRows.add(fetchCeiling.thread().row(fetchCeiling.name(), events));
        rows.add(fetchCeiling.row(events));
        // And with 2 stream threads, to set beside the knob row of Tally with 2 (the ratio stays single-threaded).
        kafka.createTopics(List.of(TestKafka.topic(prefix + "threads.counts", 6, Map.of())));
        Result twoThreadCeiling = run("count-per-key (warm), 2 stream threads", kafka, countPerKey(topics, prefix + "threads.counts"),
                prefix + "threads-ceiling", 6, List.of(prefix + "threads.counts"), Map.of(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2));
        threadRows.add(twoThreadCeiling.thread().row(twoThreadCeiling.name(), events));
        rows.add(twoThreadCeiling.row(events));
        double fetchRatio = fetchCeiling.seconds() / tally.seconds();
        long updates = tally.outputRecords();
        String report = String.format(Locale.ROOT, """
                ## Aggregation: transactions -> bucket-updates (%s)

                Machine: %d cores, %d MiB max heap, Java %s, broker %s. Command: see `AggregationBench` javadoc.
                Input: %,d events from loadgen (Zipf over 100,000 customers, default fractions of duplicates and bad records).
                Tally runs at ingest-app's defaults (no record cache, Kafka Streams' commit interval 3 s with a commit asked for
                every 166 ms while a task's records keep up (CommitPace: loadgen's backlog is behind), producer batches 256 KB with a 20 ms
                linger, consumer fetches up to 8 MB per partition); the ceiling at Kafka Streams' own (the last two rows: with
                ingest-app's fetch size, and with 2 stream threads, for the knob rows below).

                | topology | seconds | events/s | CPU µs per event (whole process, broker included) | output records per event | records sent per event, all topics |
                |---|---|---|---|---|---|
                %s

                Where the stream threads' time went while the input drained (shares of the wall time, summed over the threads;
                from Kafka Streams' thread metrics and its producer's, read at both ends of the run). The commit includes
                stages 3 and 5 forwarding, writing and emitting what they held (`CommitHook`), then the producer's flush and
                `commitTransaction`; waiting for producer buffer is `send` blocked on a full `buffer.memory`; consumer waiting
                for fetches is the main consumer's io-wait time in poll; blocked on Kafka counts all of those. Bytes
                allocated: by the threads whose name carries the application id (stream threads, producers, consumers):

                | topology | stream thread on a CPU | commits | commit ms avg / max | in commit | producer flush | commitTransaction | waiting for producer buffer | consumer waiting for fetches | blocked on Kafka | bytes allocated per event by its threads |
                |---|---|---|---|---|---|---|---|---|---|---|
                %s

                Records sent, by topic (internal topics without the application-id prefix; counted by the producer):

                | topology | topic | records | per input event |
                |---|---|---|---|
                %s

                Knobs, one at a time, warm (the last column is throughput against the warm tally row above):

                | topology | seconds | events/s | CPU µs per event | output records per event | records sent per event | × warm |
                |---|---|---|---|---|---|---|
                %s

                Tally / ceiling throughput, warm round: **%.2f** (aim: at least 0.33); against a ceiling that also fetches up to
                8 MB per partition (its row above): %.2f. Entity bucket updates emitted per input event: %.2f
                (the default rules fan an event out to 6 grade buckets in 4 entity buckets; stage 5 emits each changed
                entity bucket once per commit interval). Where the time goes, before and after each change: [aggregation-profile.md](aggregation-profile.md).

                %s
                """, Instant.now(), Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20,
                System.getProperty("java.version"), kafka.origin(), events, String.join("\n", rows), String.join("\n", threadRows),
                (ceiling.writtenRows(events) + tally.writtenRows(events)).strip(), String.join("\n", variants), ratio, fetchRatio, (double) updates / events,
                ruleCount);
        System.out.println(report);
        if (out != null) {
            Files.createDirectories(out.toAbsolutePath().getParent());
            Files.writeString(out, report + "\n" + machine.markdown());
        }
        System.exit(0);
    }

    /** The many-rules file of the rule-count axis, relative to the working directory (./tally runs from the repository). */
    static final String MANY_RULES = "rules/many-rules.yaml";

    /**
     * Tally over the same input under the many-rules file, warm, beside the warm default-rules round: how the
     * aggregation's cost grows with the rule count. Adds its rows to the tables; returns the report's section.
     */
    private static String ruleCountSection(TestKafka kafka, String registry, Topics.Names topics, String prefix, int events,
                                           Result defaultRules, List<String> rows, List<String> threadRows) throws Exception {
        String file = System.getProperty("bench.many-rules", MANY_RULES);
        if (file.equals("none")) return "";
        if (!Files.isRegularFile(Path.of(file))) {
            return "Rule count: not measured (" + file + " not found; run from the repository's root).";
        }
        GradeRules many = GradeRules.load(file);
        Topics.Names mt = new Topics.Names(topics.transactions(), prefix + "rules.transactions.dlq", prefix + "rules.bucket-updates",
                prefix + "rules.bucket-updates.dlq");
        kafka.createTopics(Topics.specs(mt).stream().filter(t -> !t.name().equals(mt.transactions()))
                .map(t -> TestKafka.topic(t.name(), t.partitions(), t.configs())).toList());
        // Before the paced commits first (one interval of 166 ms), then at ingest-app's defaults, on the same input.
        Topics.Names bt = new Topics.Names(topics.transactions(), prefix + "rules-before.transactions.dlq",
                prefix + "rules-before.bucket-updates", prefix + "rules-before.bucket-updates.dlq");
        kafka.createTopics(Topics.specs(bt).stream().filter(t -> !t.name().equals(bt.transactions()))
                .map(t -> TestKafka.topic(t.name(), t.partitions(), t.configs())).toList());
        Result before = run("tally (warm), " + many.rules().size() + " rules, one commit interval of "
                        + INGEST_DEFAULTS.commitInterval().toMillis() + " ms", kafka, tallyTopology(bt, registry, many, CommitPace.NONE),
                prefix + "rules-before-tally", 12, List.of(bt.bucketUpdates()),
                with(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, INGEST_DEFAULTS.commitInterval().toMillis()));
        rows.add(before.row(events));
        threadRows.add(before.thread().row(before.name(), events));
        Result r = run("tally (warm), " + many.rules().size() + " rules (" + file + ")", kafka, tallyTopology(mt, registry, many, PACE),
                prefix + "rules-tally", 12, List.of(mt.bucketUpdates()), TALLY_DEFAULTS);
        rows.add(r.row(events));
        threadRows.add(r.thread().row(r.name(), events));
        System.err.printf("%s: stream thread %.2f µs per grade update against %.2f with one commit interval%n", r.name(),
                r.thread().cpu() * r.seconds() * 1e6 / GradeUpdateCount.of(kafka, mt.bucketUpdates()),
                before.thread().cpu() * before.seconds() * 1e6 / GradeUpdateCount.of(kafka, bt.bucketUpdates()));
        long gradeUpdates = GradeUpdateCount.of(kafka, mt.bucketUpdates());
        String perUpdate = String.format(Locale.ROOT, "%,d grade updates (%.2f per event); per grade update: stream thread %.2f µs on a CPU, "
                        + "whole process %.2f µs (broker included), GC %.2f µs, %,.0f bytes allocated by the application's threads",
                gradeUpdates, (double) gradeUpdates / events, r.thread().cpu() * r.seconds() * 1e6 / gradeUpdates,
                r.cpuSeconds() * 1e6 / gradeUpdates, r.gcSeconds() * 1e6 / gradeUpdates, (double) r.thread().allocatedBytes() / gradeUpdates);
        System.err.println(r.name() + ": " + perUpdate);
        int defaults = GradeRules.load(GradeRules.BUILTIN_DEFAULT).rules().size();
        return String.format(Locale.ROOT, """
                ### Rule count

                The same input, warm, under the default rules (%d) and under `%s` (%d rules), one stream thread each:

                | | %d rules | %d rules | %d / %d |
                |---|---|---|---|
                | events/s | %,.0f | %,.0f | %.2f |
                | CPU µs per event (whole process, broker included) | %.0f | %.0f | %.2f |
                | entity bucket updates emitted per event (`bucket-updates`) | %.2f | %.2f | %.2f |

                Before entity buckets (one document per grade bucket) the end-to-end run at 36 rules wrote 7.0x the documents
                per event of the 4 default rules and ran at 0.44x their events/s (the issue's figures, 20,000 events, cold);
                docs/benchmarks.md has the end-to-end figures of both rule files.

                Under `%s`: %s (a grade update is one (event, grade, unit) applied: the counts of the newest version of every
                document on `bucket-updates`, summed; GC is the collectors' time while the input drained).""",
                defaults, file, many.rules().size(), defaults, many.rules().size(), many.rules().size(), defaults,
                events / defaultRules.seconds(), events / r.seconds(), defaultRules.seconds() / r.seconds(),
                defaultRules.cpuSeconds() * 1e6 / events, r.cpuSeconds() * 1e6 / events, r.cpuSeconds() / defaultRules.cpuSeconds(),
                (double) defaultRules.outputRecords() / events, (double) r.outputRecords() / events,
                (double) r.outputRecords() / defaultRules.outputRecords(), file, perUpdate);
    }

    /** ingest-app's own settings where they differ from Kafka Streams' defaults (commit interval: see {@link #run}). */
    private static final Map<String, Object> APP_DEFAULTS = AggregationSettings.STREAMS_DEFAULTS;
    /** ingest-app's settings at their defaults, for what the bench takes over besides the Streams ones. */
    private static final IngestSettings INGEST_DEFAULTS = IngestSettings.load(new String[0], Map.of());
    /** ingest-app's pace: commits asked for at the fresh interval while keeping up, Kafka Streams' at the backlog one. */
    private static final CommitPace PACE = INGEST_DEFAULTS.aggregation().topology().commitPace();
    /** ingest-app's Kafka Streams settings for Tally's runs, its commit interval (the backlog one) included. */
    private static final Map<String, Object> TALLY_DEFAULTS = with();

    private static Map<String, Object> with(Object... keyValues) {
        Map<String, Object> m = new HashMap<>(APP_DEFAULTS);
        m.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, INGEST_DEFAULTS.streamsCommitInterval().toMillis());
        for (int i = 0; i < keyValues.length; i += 2) m.put((String) keyValues[i], keyValues[i + 1]);
        return m;
    }

    private static Topology tallyTopology(Topics.Names topics, String registry, CommitPace pace) {
        return tallyTopology(topics, registry, GradeRules.load(GradeRules.BUILTIN_DEFAULT), pace);
    }

    private static Topology tallyTopology(Topics.Names topics, String registry, GradeRules rules, CommitPace pace) {
        StreamsBuilder b = new StreamsBuilder();
        TallyTopology.build(b, topics, new TopologySettings(Duration.ofDays(7), Duration.ofMinutes(5), Duration.ofDays(35),
                new BigDecimal("1000000000"), pace), rules, SourceTopics.shipped(topics),
                TallyTopology.eventDeserializer(new SchemaRegistryClient(
                        RegistryClientSettings.forUrls(registry).withMissingIdCacheTtl(INGEST_DEFAULTS.registryClient().missingIdCacheTtl()))));
        return b.build();
    }

    private static Topology countPerKey(Topics.Names topics, String output) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(topics.transactions(), Consumed.with(Serdes.String(), Serdes.ByteArray()))
                .groupByKey().count().toStream().to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return b.build();
    }

    record Result(String name, double seconds, double cpuSeconds, double gcSeconds, long outputRecords, Map<String, Long> written,
                  ThreadTime thread) {
        String row(int events) {
            long all = written.values().stream().mapToLong(Long::longValue).sum();
            return String.format(Locale.ROOT, "| %s | %.1f | %,.0f | %.0f | %.2f | %.2f |", name, seconds, events / seconds,
                    cpuSeconds * 1e6 / events, (double) outputRecords / events, (double) all / events);
        }

        String writtenRows(int events) {
            StringBuilder b = new StringBuilder();
            written.forEach((topic, n) -> b.append(String.format(Locale.ROOT, "| %s | %s | %,d | %.2f |%n", name, topic, n, (double) n / events)));
            return b.toString();
        }
    }

    private static Result run(String name, TestKafka kafka, Topology topology, String appId, int inputPartitions,
                              List<String> outputs) throws Exception {
        return run(name, kafka, topology, appId, inputPartitions, outputs, Map.of());
    }

    private static Result run(String name, TestKafka kafka, Topology topology, String appId, int inputPartitions,
                              List<String> outputs, Map<String, Object> overrides) throws Exception {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        // ingest-app's default (a sixth of the default freshness target), for the ceiling too: same interval, same run
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, FreshnessTarget.DEFAULT.commitInterval().toMillis());
        p.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("bench-state").toString());
        p.putAll(overrides);
        CountDownLatch running = new CountDownLatch(1);
        try (KafkaStreams streams = new KafkaStreams(topology, p); Admin admin = kafka.admin()) {
            streams.setStateListener((now, before) -> { if (now == KafkaStreams.State.RUNNING) running.countDown(); });
            streams.start();
            if (!running.await(120, TimeUnit.SECONDS)) throw new IllegalStateException(name + " did not reach RUNNING");
            long t0 = System.nanoTime();
            long cpu0 = cpuNanos();
            long gc0 = gcMillis();
            Map<String, Double> thread0 = threadTimes(streams);
            long alloc0 = allocatedBytes(appId);
            long streamCpu0 = streamThreadCpuNanos(appId);
            awaitDrained(admin, appId, inputPartitions);
            double seconds = (System.nanoTime() - t0) / 1e9;
            double cpuSeconds = (cpuNanos() - cpu0) / 1e9;
            double gcSeconds = (gcMillis() - gc0) / 1e3;
            int tasks = streams.metadataForLocalThreads().stream().mapToInt(t -> t.activeTasks().size()).sum();
            ThreadTime thread = ThreadTime.between(thread0, threadTimes(streams), seconds, tasks,
                    (streamThreadCpuNanos(appId) - streamCpu0) / (seconds * 1e9), allocatedBytes(appId) - alloc0);
            System.err.printf(Locale.ROOT, "%s: %.1f s, process CPU %.0f%%; stream threads: %s%n", name, seconds,
                    100.0 * cpuSeconds / seconds, thread);
            // Every record this topology's producer sent, by topic: outputs, repartition and changelogs. Counted at
            // the producer because Streams purges repartition records once they are consumed.
            Map<String, Long> written = new java.util.TreeMap<>();
            streams.metrics().forEach((id, metric) -> {
                if (id.group().equals("producer-topic-metrics") && id.name().equals("record-send-total")) {
                    String topic = id.tags().get("topic");
                    written.merge(topic.startsWith(appId + "-") ? topic.substring(appId.length() + 1) : topic,
                            (long) ((Number) metric.metricValue()).doubleValue(), Long::sum);
                }
            });
            streams.close(Duration.ofSeconds(30));
            long output = 0;
            for (String t : outputs) output += countRecords(kafka, t);
            return new Result(name, seconds, cpuSeconds, gcSeconds, output, written, thread);
        }
    }

    /**
     * Where the stream threads' time went while the input drained, from cumulative metrics read at both ends of the
     * run (summed over the threads, as a share of the run's wall time, so 2 threads can add up to 2.0): on a CPU, in the
     * commit (commit-latency-avg x commit-total x tasks: Kafka Streams records a commit's latency divided by the tasks it
     * committed; flushing the stores, the producer and committing the transaction), of that
     * blocked in the producer's flush and commitTransaction, and blocked on Kafka in all (blocked-time-ns-total: also
     * the consumer's poll waits).
     */
    record ThreadTime(double cpu, double commits, double commitMsAvg, double commitMsMax, double inCommit, double producerFlush,
                      double commitTransaction, double bufferWait, double pollWait, double blocked, long allocatedBytes) {
        static ThreadTime between(Map<String, Double> a, Map<String, Double> b, double seconds, int tasks, double cpu,
                                  long allocatedBytes) {
            double commits = b.get("commit-total") - a.get("commit-total");
            double wallNs = seconds * 1e9;
            return new ThreadTime(cpu, commits, b.get("commit-latency-avg") * tasks, b.get("commit-latency-max") * tasks,
                    commits * b.get("commit-latency-avg") * tasks * 1e6 / wallNs,
                    (b.get("flush-time-ns-total") - a.get("flush-time-ns-total")) / wallNs,
                    (b.get("txn-commit-time-ns-total") - a.get("txn-commit-time-ns-total")) / wallNs,
                    (b.get("bufferpool-wait-time-ns-total") - a.get("bufferpool-wait-time-ns-total")) / wallNs,
                    (b.get("consumer-io-wait") - a.get("consumer-io-wait")) / wallNs,
                    (b.get("blocked-time-ns-total") - a.get("blocked-time-ns-total")) / wallNs, allocatedBytes);
        }

        String row(String name, int events) {
            return String.format(Locale.ROOT, "| %s | %.2f | %.0f | %.0f / %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %,.0f |", name, cpu, commits, commitMsAvg,
                    commitMsMax, inCommit, producerFlush, commitTransaction, bufferWait, pollWait, blocked, (double) allocatedBytes / events);
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "on a CPU %.2f, %.0f commits (%.0f ms avg, %.0f max), in commit %.2f, producer flush %.2f, "
                    + "commitTransaction %.2f, waiting for producer buffer %.2f, consumer waiting for fetches %.2f, blocked on Kafka %.2f of the wall time; %,d MB allocated", cpu,
                    commits, commitMsAvg, commitMsMax, inCommit, producerFlush, commitTransaction, bufferWait, pollWait, blocked, allocatedBytes >> 20);
        }
    }

    /** CPU time so far of the live stream threads of this application id (not their producers' network threads). */
    private static long streamThreadCpuNanos(String appId) {
        var threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().contains(appId) && t.getName().contains("StreamThread") && !t.getName().contains("producer")) {
                sum += Math.max(0, threads.getThreadCpuTime(t.getId()));
            }
        }
        return sum;
    }

    /** Bytes allocated so far by the live threads whose name carries the application id. */
    private static long allocatedBytes(String appId) {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().contains(appId)) sum += Math.max(0, threads.getThreadAllocatedBytes(t.getId()));
        }
        return sum;
    }

    /** Stream-thread and producer metrics summed over the threads (averages and maxima: the largest). */
    private static Map<String, Double> threadTimes(KafkaStreams streams) {
        List<String> summed = List.of("commit-total", "blocked-time-ns-total", "flush-time-ns-total", "txn-commit-time-ns-total",
                "bufferpool-wait-time-ns-total");
        List<String> largest = List.of("commit-latency-avg", "commit-latency-max");
        Map<String, Double> m = new HashMap<>();
        summed.forEach(k -> m.put(k, 0.0));
        m.put("consumer-io-wait", 0.0);
        largest.forEach(k -> m.put(k, 0.0));
        streams.metrics().forEach((id, metric) -> {
            boolean ours = id.group().equals("stream-thread-metrics") || id.group().equals("producer-metrics");
            if (id.group().equals("consumer-metrics") && id.name().equals("io-wait-time-ns-total")
                    && id.tags().getOrDefault("client-id", "").matches(".*StreamThread-\\d+-consumer") && metric.metricValue() instanceof Number n) {
                m.merge("consumer-io-wait", n.doubleValue(), Double::sum);
            }
            if (!ours || !(metric.metricValue() instanceof Number n) || Double.isNaN(n.doubleValue())) return;
            if (summed.contains(id.name())) m.merge(id.name(), n.doubleValue(), Double::sum);
            else if (largest.contains(id.name()) && id.group().equals("stream-thread-metrics")) m.merge(id.name(), n.doubleValue(), Math::max);
        });
        return m;
    }

    /** Time the collectors took so far, all of them (the parallel collector's pauses stop every thread). */
    private static long gcMillis() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream().mapToLong(b -> Math.max(0, b.getCollectionTime())).sum();
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static void awaitDrained(Admin admin, String group, int inputPartitions) throws Exception {
        while (true) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> req = new HashMap<>();
            committed.keySet().forEach(tp -> req.put(tp, OffsetSpec.latest()));
            boolean done = committed.size() >= inputPartitions;
            if (done) {
                var ends = admin.listOffsets(req).all().get();
                for (var e : committed.entrySet()) {
                    if (e.getValue() == null || e.getValue().offset() < ends.get(e.getKey()).offset()) done = false;
                }
            }
            if (done) return;
            Thread.sleep(100);
        }
    }

    /** Committed records of a topic (end offsets would also count transaction markers). */
    private static long countRecords(TestKafka kafka, String topic) {
        try (var c = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(Map.of(
                "bootstrap.servers", kafka.bootstrapServers(), "isolation.level", "read_committed", "max.poll.records", 10_000),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer(), new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            long n = 0;
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) n += c.poll(Duration.ofMillis(500)).count();
            return n;
        }
    }
}
