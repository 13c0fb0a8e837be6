package io.tally.benchmarks.sink;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.ThrottlingRetryOptions;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import io.micrometer.core.instrument.search.Search;
import io.tally.benchmarks.BenchRun;
import io.tally.ingest.Main;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.sink.SinkMetrics;
import io.tally.model.Aggregate;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import io.tally.schemas.Topics;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.sink.SinkRun;
import java.io.File;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import reactor.core.publisher.Flux;

/**
 * Benchmark of the sink (not part of the test suite), all in one run against the in-process broker and
 * a private local Cosmos endpoint:
 *
 * <ol>
 *   <li>a Zipf backlog of bucket updates written by the Tally sink (coalesced, grouped, bulk, conditional);
 *   <li>the same topic written by a naive sink: one upsert per update, no coalescing, no grouping
 *       (32 upserts in flight, offsets committed after each poll's upserts);
 *   <li>the sink's heap (a separate JVM, -Xmx512m) while it works through a backlog of N updates.
 * </ol>
 *
 * Run from the repository root (args: updates for 1-2, backlog for 3; writes docs/benchmarks/sink.md):
 * <pre>./tally bench sink [UPDATES [BACKLOG]]</pre>
 * (defaults 200000 10000000).
 */
public final class SinkBench {
    private static final int BUCKETS = 50_000;
    private static final double ZIPF_S = 1.1;

    public static void main(String[] args) throws Exception {
        BenchRun.begin("sink");
        int updates = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        long backlog = args.length > 1 ? Long.parseLong(args[1]) : 10_000_000L;
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("com.azure")).setLevel(ch.qos.logback.classic.Level.OFF);
        TestKafka kafka = TestKafka.get();
        LocalCosmos cosmos = System.getenv("TALLY_COSMOS_ENDPOINT") != null ? LocalCosmos.get() : LocalCosmos.startPrivate();
        BenchRun.begin("sink").cosmos(cosmos.control());
        StringBuilder md = new StringBuilder();
        String run = UUID.randomUUID().toString().substring(0, 6);

        // 1. Tally sink.
        String prefix = "bench-" + run + "-";
        String topic = Topics.Names.withPrefix(prefix).bucketUpdates();
        kafka.createTopics(List.of(TestKafka.topic(topic, 6, Map.of("cleanup.policy", "compact")), TestKafka.topic(topic + ".dlq", 1, Map.of())));
        double produceSeconds = produce(kafka, topic, updates, BUCKETS, 1);
        long[] ends = endOffsets(kafka, topic);
        IngestSettings settings = IngestSettings.load(new String[] {"--ingest.role=sink", "--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--topics.prefix=" + prefix, "--sink.group-id=bench-" + run, "--cosmos.endpoint=" + cosmos.endpoint(),
                "--cosmos.database=bench-tally-" + run, "--sink.metrics.port=-1"}, Map.of());
        double tallySeconds;
        double written;
        double stale;
        double ru;
        double limit;
        try (IngestApp sink = new IngestApp(settings)) {
            long t0 = System.nanoTime();
            sink.start();
            awaitCommitted(kafka, "bench-" + run, topic, ends, Duration.ofMinutes(10));
            tallySeconds = (System.nanoTime() - t0) / 1e9;
            SinkMetrics m = sink.sink().metrics();
            written = count(m, "tally.sink.documents.written", "written");
            stale = count(m, "tally.sink.documents.written", "stale");
            ru = Search.in(m.registry()).name("tally.sink.request.units").counter().count();
            limit = sink.sink().writer().concurrencyLimit();
        }
        System.out.printf("tally: %d updates in %.1f s, %.0f written + %.0f stale, %.0f RU%n", updates, tallySeconds, written, stale, ru);

        // 2. Naive sink on the same topic.
        CosmosAsyncClient client = cosmos.clientBuilder().throttlingRetryOptions(new ThrottlingRetryOptions()
                .setMaxRetryAttemptsOnThrottledRequests(Integer.MAX_VALUE).setMaxRetryWaitTime(Duration.ofMinutes(10))).buildAsyncClient();
        client.createDatabaseIfNotExists("bench-naive-" + run).block();
        client.getDatabase("bench-naive-" + run).createContainerIfNotExists(new CosmosContainerProperties("buckets", "/pk")).block();
        CosmosAsyncContainer naive = client.getDatabase("bench-naive-" + run).getContainer("buckets");
        double[] naiveResult = naive(kafka, topic, naive, updates);
        client.close();
        System.out.printf("naive: %d upserts in %.1f s, %.0f RU%n", updates, naiveResult[0], naiveResult[1]);

        // 3. Heap with a backlog.
        String prefix2 = "backlog-" + run + "-";
        String topic2 = Topics.Names.withPrefix(prefix2).bucketUpdates();
        kafka.createTopics(List.of(TestKafka.topic(topic2, 6, Map.of("cleanup.policy", "compact")), TestKafka.topic(topic2 + ".dlq", 1, Map.of())));
        double backlogProduce = produce(kafka, topic2, backlog, 1_000_000, 7);
        List<String> heap = heapUnderBacklog(kafka, cosmos, prefix2, run);

        double tallyRate = updates / tallySeconds;
        double naiveRate = updates / naiveResult[0];
        md.append("# Sink benchmark\n\n")
          .append("Generated by `benchmarks/src/main/java/io/tally/benchmarks/sink/SinkBench.java` on ").append(Instant.now().toString(), 0, 16)
          .append(" UTC. Machine: 2 cores shared with other engineers' builds and tests (load average ")
          .append(String.format(Locale.ROOT, "%.1f", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()))
          .append(" at the end of the run): absolute figures are noisy and conservative; the ratio is the figure to read.\n")
          .append("Broker in-process (KafkaClusterTestKit), local Cosmos endpoint (Node, one thread), sink and naive writer in the same JVM, Java ")
          .append(System.getProperty("java.version")).append(", azure-cosmos 4.81.0 Gateway mode.\n\n")
          .append("Command (from the repository root): `./tally bench sink ")
          .append(updates).append(' ').append(backlog).append("`\n\n")
          .append("Under added Cosmos latency (0, 2, 10, 50 ms per request), Tally vs AIMD alone vs naive: docs/benchmarks/sink-latency.md.\n\n")
          .append("## 1–2. Tally sink vs naive, same topic, same run\n\n")
          .append(String.format(Locale.ROOT, "Workload: %,d bucket updates (absolute values, ver +1 per update) over %,d buckets, Zipf s=%.1f, "
                  + "produced in %.1f s before either sink starts (a backlog), 6 partitions. Both run until every offset is committed.%n%n",
                  updates, BUCKETS, ZIPF_S, produceSeconds))
          .append("| mode | wall s | updates absorbed/s | documents written/s | Cosmos writes | RU | RU per update |\n|---|---|---|---|---|---|---|\n")
          .append(String.format(Locale.ROOT, "| Tally (coalesce + group + bulk, conditional patch/create) | %.1f | **%,.0f** | %,.0f | %,.0f written + %,.0f stale-refused | %,.0f | %.2f |%n",
                  tallySeconds, tallyRate, (written + stale) / tallySeconds, written, stale, ru, ru / updates))
          .append(String.format(Locale.ROOT, "| naive (one upsert per update, 32 in flight) | %.1f | **%,.0f** | %,.0f | %,d upserts | %,.0f | %.2f |%n%n",
                  naiveResult[0], naiveRate, naiveRate, updates, naiveResult[1], naiveResult[1] / updates))
          .append(String.format(Locale.ROOT, "**Ratio: %.1f× the updates absorbed per second, %.1f× fewer RU per update.** Tally's AIMD limit at the end: %.0f.%n%n",
                  tallyRate / naiveRate, (naiveResult[1] / updates) / (ru / updates), limit))
          .append("## 3. Sink heap with a backlog\n\n")
          .append(String.format(Locale.ROOT, "%,d updates over 1,000,000 buckets (Zipf s=%.1f) produced in %.0f s; then a sink JVM (-Xmx512m, defaults) "
                  + "starts on them. Sampled from its Prometheus endpoint (`jvm_memory_used_bytes{area=\"heap\"}`, summed over pools):%n%n",
                  backlog, ZIPF_S, backlogProduce))
          .append("| s | heap used MB (incl. garbage) | live data after last major GC MB | updates consumed | documents in flight | consumer lag (records-lag-max, per partition) |\n|---|---|---|---|---|---|\n");
        heap.forEach(l -> md.append(l).append('\n'));
        md.append("\nThe heap stays flat while millions of updates wait: the poll loop pauses at `sink.max-in-flight-documents`; "
                + "the backlog stays in Kafka.\n\n").append(String.format(Locale.ROOT, "The %,d-update backlog took ", backlog)).append(String.format(Locale.ROOT, "%.0f", backlogProduce))
          .append(" s to produce; the sink consumed only part of it during the sample window, so the backlog was millions of records deep throughout.\n");
        Path out = Path.of(System.getProperty("user.dir")).resolve(Files.exists(Path.of("docs")) ? "docs/benchmarks/sink.md" : "../docs/benchmarks/sink.md");
        Files.writeString(out, md.append('\n').append(BenchRun.begin("sink").markdown()).toString());
        System.out.println(md);
        System.exit(0);
    }

    private static double count(SinkMetrics m, String name, String outcome) {
        var c = Search.in(m.registry()).name(name).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    /** Zipf-distributed absolute updates; returns seconds. Every send is checked. */
    static double produce(TestKafka kafka, String topic, long n, int buckets, long seed) throws Exception {
        double[] cdf = new double[buckets];
        double sum = 0;
        for (int i = 0; i < buckets; i++) cdf[i] = sum += 1 / Math.pow(i + 1, ZIPF_S);
        for (int i = 0; i < buckets; i++) cdf[i] /= sum;
        long[] ver = new long[buckets];
        Random rnd = new Random(seed);
        AtomicLong failed = new AtomicLong();
        AtomicReference<Exception> first = new AtomicReference<>();
        long t0 = System.nanoTime();
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG, 262_144,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"), new StringSerializer(), new ByteArraySerializer())) {
            for (long i = 0; i < n; i++) {
                int b = Arrays.binarySearch(cdf, rnd.nextDouble());
                b = b >= 0 ? b : Math.min(buckets - 1, -b - 1);
                long v = ++ver[b];
                EntityBucket d = SinkRun.spend("bench|e" + (b % 20_000), b, new Aggregate(BigDecimal.valueOf(v), v, BigDecimal.ONE,
                        BigDecimal.valueOf(v)));
                p.send(new ProducerRecord<>(topic, d.pk() + "|" + d.id(), EntityBucketJson.write(d)), (md, e) -> {
                    if (e != null) { failed.incrementAndGet(); first.compareAndSet(null, e); }
                });
            }
            p.flush();
        }
        if (failed.get() > 0) throw new IllegalStateException(failed.get() + " sends failed", first.get());
        return (System.nanoTime() - t0) / 1e9;
    }

    static long[] endOffsets(TestKafka kafka, String topic) throws Exception {
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
            Map<TopicPartition, Long> e = c.endOffsets(tps);
            long[] out = new long[tps.size()];
            e.forEach((tp, o) -> out[tp.partition()] = o);
            return out;
        }
    }

    static void awaitCommitted(TestKafka kafka, String group, String topic, long[] ends, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (var admin = kafka.admin()) {
            while (System.nanoTime() < deadline) {
                var offsets = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                boolean done = true;
                for (int p = 0; p < ends.length; p++) {
                    var o = offsets.get(new TopicPartition(topic, p));
                    if (ends[p] > 0 && (o == null || o.offset() < ends[p])) done = false;
                }
                if (done) return;
                Thread.sleep(200);
            }
        }
        throw new IllegalStateException("group " + group + " did not commit everything within " + timeout);
    }

    /** One upsert per record, 32 in flight, commit after each poll's upserts; returns {seconds, RU}. */
    public static double[] naive(TestKafka kafka, String topic, CosmosAsyncContainer container, int expected) {
        return naive(kafka, topic, container, expected, Duration.ofDays(1), new AtomicLong());
    }

    /**
     * The naive sink until {@code expected} records are written or {@code limit} has passed, counting written records in
     * {@code progress} (for time series); returns {seconds, RU, records written}.
     */
    public static double[] naive(TestKafka kafka, String topic, CosmosAsyncContainer container, long expected, Duration limit, AtomicLong progress) {
        double ru = 0;
        long seen = 0;
        long t0 = System.nanoTime();
        long deadline = t0 + limit.toNanos();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "naive-" + UUID.randomUUID(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            CosmosItemRequestOptions noContent = new CosmosItemRequestOptions().setContentResponseOnWriteEnabled(false);
            while (seen < expected && System.nanoTime() < deadline) {
                ConsumerRecords<String, byte[]> records = c.poll(Duration.ofMillis(200));
                List<ConsumerRecord<String, byte[]>> list = new ArrayList<>();
                records.forEach(list::add);
                Double charge = Flux.fromIterable(list)
                        .flatMap(r -> {
                            EntityBucket d = EntityBucketJson.read(r.value());
                            return container.upsertItem(EntityBucketJson.tree(d), new PartitionKey(d.pk()), noContent).doOnNext(x -> progress.incrementAndGet());
                        }, 32)
                        .map(resp -> resp.getRequestCharge()).reduce(0.0, Double::sum).block();
                ru += charge == null ? 0 : charge;
                seen += list.size();
                if (!list.isEmpty()) c.commitSync();
            }
        }
        return new double[] {(System.nanoTime() - t0) / 1e9, ru, seen};
    }

    /** Starts a sink JVM on the backlog and samples its heap for about a minute. */
    static List<String> heapUnderBacklog(TestKafka kafka, LocalCosmos cosmos, String prefix, String run) throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-XX:+UseParallelGC", "-cp", System.getProperty("java.class.path")));
        for (String p : List.of("javax.net.ssl.trustStore", "javax.net.ssl.trustStorePassword", "javax.net.ssl.trustStoreType")) {
            if (System.getProperty(p) != null) cmd.add("-D" + p + "=" + System.getProperty(p));
        }
        cmd.addAll(List.of(Main.class.getName(), "--ingest.role=sink", "--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--topics.prefix=" + prefix, "--sink.group-id=backlog-" + run, "--cosmos.endpoint=" + cosmos.endpoint(),
                "--cosmos.database=bench-backlog-" + run, "--sink.metrics.port=" + port));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(new File("target/sink-bench-backlog.log")).start();
        List<String> rows = new ArrayList<>();
        HttpClient http = HttpClient.newHttpClient();
        try {
            long t0 = System.nanoTime();
            for (int i = 0; i < 16; i++) {
                Thread.sleep(5000);
                try {
                    String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                            HttpResponse.BodyHandlers.ofString()).body();
                    rows.add(String.format(Locale.ROOT, "| %.0f | %.0f | %.0f | %,.0f | %,.0f | %,.0f |", (System.nanoTime() - t0) / 1e9,
                            sum(body, "jvm_memory_used_bytes{area=\"heap\"") / 1e6, sum(body, "jvm_gc_live_data_size_bytes") / 1e6,
                            sum(body, "tally_sink_updates_consumed_total"),
                            sum(body, "tally_sink_in_flight_documents"), sum(body, "tally_sink_consumer_lag")));
                    System.out.println(rows.get(rows.size() - 1));
                } catch (java.io.IOException e) {
                    // not listening yet
                }
            }
        } finally {
            p.destroy();
            if (!p.waitFor(15, TimeUnit.SECONDS)) p.destroyForcibly();
        }
        return rows;
    }

    private static double sum(String body, String prefix) {
        return body.lines().filter(l -> l.startsWith(prefix))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }
}
