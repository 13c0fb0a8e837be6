package io.tally.testsupport.pipeline;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.schemas.DeadLetters;
import io.tally.loadgen.Loadgen;
import io.tally.loadgen.LoadgenSettings;
import io.tally.schemas.Topics;
import io.tally.schemas.topics.TopicProvisioner;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import io.tally.testsupport.truth.GroundTruthJudge;
import io.tally.testsupport.truth.GroundTruthJudge.Verdict;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import io.tally.testsupport.kafka.TestKafka;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One guarantee test's (or the scale-out benchmark's) whole pipeline: its own topics (a unique {@code topics.prefix}), Streams
 * application id, sink group and Cosmos database; ingest-app instances in child JVMs
 * ({@link IngestNode}); loadgen with a ground truth; every bucket document in Cosmos judged against it
 * ({@link GroundTruthJudge}: missing, extra and wrong ones, every field), the DLQ counted by reason, a
 * watcher for a stored {@code ver} going backwards, and a wait until all of that holds.
 */
public final class Pipeline implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Pipeline.class);
    public static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(30);
    /**
     * Until output reaches Cosmos: two fresh JVMs (Streams, Cosmos client) plus loadgen need ~15 s on an idle
     * 2-core machine and over a minute on a shared, overloaded one.
     */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(180);

    final String id = UUID.randomUUID().toString().substring(0, 8);
    final String name;
    public final String bootstrap;
    final String registryUrl;
    final LocalCosmos cosmos;
    final Path dir;
    final String prefix;
    public final Topics.Names topics;
    public final String appId;
    public final String sinkGroup;
    public final String database;
    private final List<IngestNode> nodes = new CopyOnWriteArrayList<>();
    private final CosmosAsyncClient client;
    private int truthFiles;
    private Map<String, String> kafkaClientSettings = Map.of();
    private String sourcesFile;
    private List<String> eventTopics;

    public Pipeline(String name, String bootstrap, LocalSchemaRegistry registry, LocalCosmos cosmos, Path dir) {
        this.name = name;
        this.bootstrap = bootstrap;
        this.registryUrl = registry.url();
        this.cosmos = cosmos;
        this.dir = dir;
        // Dashes only: Kafka's client metrics write '.' in topic names as '_'.
        this.prefix = "g-" + name + "-" + id + "-";
        this.topics = Topics.Names.withPrefix(prefix);
        this.eventTopics = List.of(topics.transactions());
        this.appId = "g-" + name + "-" + id;
        this.sinkGroup = appId + "-sink";
        this.database = appId;
        this.client = cosmos.newAsyncClient();
    }

    // --- set-up ---------------------------------------------------------------------------------

    /**
     * Settings the harness's own Kafka clients (admin, readers) add to the bootstrap servers: the security of a
     * secured broker. The instances and loadgen get theirs as {@code --kafka.*} flags from the test.
     */
    public Pipeline withKafkaClientSettings(Map<String, String> settings) {
        this.kafkaClientSettings = Map.copyOf(settings);
        return this;
    }

    /**
     * Reads the events of a sources file ({@code ingest.sources.file}) instead of the shipped one: {@code topics} are
     * the names the file lists (this run's prefix is put in front), created with the run's other topics.
     */
    public Pipeline withSources(Path file, String... topicsInFile) {
        this.sourcesFile = file.toAbsolutePath().toString();
        this.eventTopics = java.util.Arrays.stream(topicsInFile).map(t -> prefix + t).toList();
        return this;
    }

    /** The run's event topics (full names). */
    public List<String> eventTopics() {
        return eventTopics;
    }

    /** Creates the run's topics as Tally specifies them and waits for their leaders. */
    public Pipeline provisionTopics() {
        try (Admin admin = admin()) {
            new TopicProvisioner(admin).ensure(Topics.specs(topics, eventTopics), true);
        }
        return this;
    }

    /**
     * Starts an ingest-app instance with role aggregate, sink or both. Every instance of the run shares
     * the application id and sink group, so instances of one role share the partitions.
     */
    public IngestNode start(String nodeName, String role, String... extraFlags) {
        List<String> args = new ArrayList<>(List.of("--ingest.role=" + role, "--kafka.bootstrap.servers=" + bootstrap,
                "--schema.registry.url=" + registryUrl, "--topics.prefix=" + prefix, "--ingest.application-id=" + appId,
                "--sink.group-id=" + sinkGroup, "--ingest.state-dir=" + dir.resolve("state-" + nodeName),
                "--ingest.commit-interval.ms=200", "--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + database,
                // Names the instance in the consumer groups: the client id prefixes every member id.
                "--kafka.client.id=" + nodeName));
        if (sourcesFile != null) args.add("--ingest.sources.file=" + sourcesFile);
        args.addAll(List.of(extraFlags));
        IngestNode node = new IngestNode(nodeName, role, args, dir.resolve(nodeName + ".log")).start();
        nodes.add(node);
        log.info("[{}] started {} ({}), log {}", name, nodeName, role, dir.resolve(nodeName + ".log"));
        return node;
    }

    /** Flags of a replay ({@code ./tally replay}) over this run's topics into its container, then {@code extra}. */
    public List<String> replayFlags(String... extra) {
        List<String> args = new ArrayList<>(List.of("--kafka.bootstrap.servers=" + bootstrap, "--schema.registry.url=" + registryUrl,
                "--topics.prefix=" + prefix, "--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + database));
        if (sourcesFile != null) args.add("--ingest.sources.file=" + sourcesFile);
        args.addAll(List.of(extra));
        return args;
    }

    List<IngestNode> nodes() {
        return List.copyOf(nodes);
    }

    /**
     * Takes a stopped instance out of the run: it is no longer waited for, nor shown on a failure (an instance that
     * stopped on purpose, say on rules it no longer counts).
     */
    public void retire(IngestNode node) {
        if (node.isAlive()) throw new IllegalStateException(node.name + " is still running");
        nodes.remove(node);
    }

    /**
     * Loadgen settings for this run: the small population the guarantee tests use, 5% duplicates and
     * 1% each of late, future, malformed and invalid records, valid events over the last three hours.
     */
    public LoadgenSettings loadgen(long events, long rate, long seed, String... extra) {
        List<String> flags = new ArrayList<>(List.of("--kafka.bootstrap.servers=" + bootstrap, "--schema.registry.url=" + registryUrl,
                "--loadgen.topic=" + topics.transactions(), "--loadgen.events=" + events, "--loadgen.rate=" + rate,
                "--loadgen.seed=" + seed, "--loadgen.domain=g", "--loadgen.customers=300", "--loadgen.skus=20",
                "--loadgen.window.ms=" + Duration.ofHours(3).toMillis(),
                "--loadgen.duplicate.fraction=0.05", "--loadgen.late.fraction=0.01", "--loadgen.future.fraction=0.01",
                "--loadgen.malformed.fraction=0.01", "--loadgen.invalid.fraction=0.01",
                "--loadgen.progress.interval.ms=10000",
                "--loadgen.ground-truth-file=" + dir.resolve("truth-" + (++truthFiles) + ".json")));
        flags.addAll(List.of(extra));
        return LoadgenSettings.load(flags.toArray(String[]::new), Map.of());
    }

    /** Runs loadgen on its own thread; the future holds its ground truth once every record has a send result. */
    public CompletableFuture<Truth> produceInBackground(LoadgenSettings s) {
        CompletableFuture<Truth> out = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                out.complete(produce(s));
            } catch (Throwable e) {
                out.completeExceptionally(e);
            }
        }, "loadgen-" + name);
        t.setDaemon(true);
        t.start();
        return out;
    }

    /** Runs loadgen to the end; fails unless every record was acknowledged (the truth covers acknowledged ones only). */
    Truth produce(LoadgenSettings s) throws IOException {
        Path progress = dir.resolve("loadgen.log");
        Loadgen.Summary summary;
        try (PrintStream out = new PrintStream(Files.newOutputStream(progress, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND), true, StandardCharsets.UTF_8)) {
            summary = Loadgen.run(s, out);
        }
        if (summary.failed() > 0 || summary.acknowledged() != summary.planned()) {
            throw new AssertionError("loadgen: " + summary.failed() + " of " + summary.planned() + " records not acknowledged"
                    + summary.aborted().map(a -> " (" + a + ")").orElse("") + "\n" + io.tally.testsupport.process.Processes.tail(progress));
        }
        log.info("[{}] loadgen sent {} records in {} s", name, summary.acknowledged(), summary.elapsed().toSeconds());
        return Truth.read(s.groundTruthFile().orElseThrow(), summary);
    }

    // --- reading back ---------------------------------------------------------------------------

    CosmosAsyncContainer container() {
        return client.getDatabase(database).getContainer("buckets");
    }

    /**
     * Every stored document (entity buckets and their spill pages, not the rules record) by {@code pk|id}; empty while the
     * container does not exist yet.
     */
    public Map<String, JsonNode> stored() {
        return stored("buckets");
    }

    /** As {@link #stored()}, of another container of the run's database (a replay's). */
    public Map<String, JsonNode> stored(String containerName) {
        Map<String, JsonNode> out = new HashMap<>();
        try {
            List<JsonNode> docs = client.getDatabase(database).getContainer(containerName).queryItems("SELECT * FROM c", new CosmosQueryRequestOptions(), JsonNode.class)
                    .byPage(1000).flatMapIterable(FeedResponse::getResults).collectList().block(Duration.ofSeconds(60));
            // the deployment's rules record is not an entity bucket (docs/DESIGN.md, "Rules that change")
            if (docs != null) docs.stream().filter(d -> !d.path("pk").asText().equals("_tally"))
                    .forEach(d -> out.put(d.get("pk").asText() + "|" + d.get("id").asText(), d));
        } catch (CosmosException e) {
            if (e.getStatusCode() != 404) throw e;
        }
        return out;
    }

    /**
     * Waits until every started instance is up: the Streams group has every input partition assigned and
     * each sink answers on its metrics port. Loadgen starts after this, so faults hit a flowing pipeline
     * rather than one still starting.
     */
    public void awaitReady(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int inputPartitions = Topics.specs(topics).get(0).partitions();
        String state = "";
        while (System.nanoTime() < deadline) {
            List<IngestNode> dead = nodes.stream().filter(n -> !n.isAlive()).toList();
            if (!dead.isEmpty()) {
                throw new AssertionError("[" + name + "] " + dead.get(0).name + " exited while starting\n" + dead.get(0).logTail());
            }
            try {
                int assigned = ScaleOut.assignment(this, appId, topics.transactions()).values().stream().mapToInt(java.util.Set::size).sum();
                List<String> sinksDown = nodes.stream().filter(n -> !n.role.equals("aggregate") && n.metrics().isEmpty())
                        .map(n -> n.name).toList();
                boolean aggregating = nodes.stream().noneMatch(n -> !n.role.equals("sink")) || assigned == inputPartitions;
                if (aggregating && sinksDown.isEmpty()) return;
                state = assigned + " of " + inputPartitions + " input partitions assigned, sinks not answering: " + sinksDown;
            } catch (RuntimeException e) {
                state = e.toString();
            }
            Thread.sleep(500);
        }
        StringBuilder m = new StringBuilder("[" + name + "] instances not ready within " + timeout.toSeconds() + " s: " + state + "\n");
        for (IngestNode n : nodes) m.append("  ").append(n.name).append(":\n").append(n.logTail()).append('\n');
        throw new AssertionError(m.toString());
    }

    /** Waits until the sink has written something: the pipeline flows end to end. */
    public void awaitFlowing(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (!stored().isEmpty()) return;
            } catch (RuntimeException e) {
                // not yet
            }
            Thread.sleep(500);
        }
        StringBuilder m = new StringBuilder("[" + name + "] nothing reached Cosmos within " + timeout.toSeconds() + " s\n");
        for (IngestNode n : nodes) m.append("  ").append(n.name).append(":\n").append(n.logTail()).append('\n');
        throw new AssertionError(m.toString());
    }

    /** Records on the input DLQ by their {@code tally.dlq.reason} header (read_committed, from the start to the current end). */
    Map<String, Long> deadLettersByReason() {
        Map<String, Long> out = new TreeMap<>();
        readAll(topics.transactionsDlq(), r -> {
            Header reason = r.headers().lastHeader(DeadLetters.REASON);
            out.merge(reason == null ? "(no reason header)" : new String(reason.value(), StandardCharsets.UTF_8), 1L, Long::sum);
        });
        return out;
    }

    /** Every committed record of {@code topic}, from the beginning to its end as of now (at most a minute of reading). */
    public void readAll(String topic, java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> each) {
        TestKafka.readCommitted(bootstrap, kafkaClientSettings, topic, new ByteArrayDeserializer(), new ByteArrayDeserializer()).forEach(each);
    }

    /** Records not yet committed by a consumer group, per partition with any; empty when caught up. */
    public Map<TopicPartition, Long> lag(String group) {
        try (Admin admin = admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            committed.keySet().forEach(tp -> latest.put(tp, OffsetSpec.latest()));
            var ends = admin.listOffsets(latest).all().get();
            Map<TopicPartition, Long> lag = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
            committed.forEach((tp, o) -> {
                long behind = ends.get(tp).offset() - (o == null ? 0 : o.offset());
                if (behind > 0) lag.put(tp, behind);
            });
            return lag;
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the offsets of group " + group + ": " + e, e);
        }
    }

    /** The Streams group has committed every input and repartition partition up to its end. */
    public boolean aggregationDrained() {
        try (Admin admin = admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(appId).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> inputEnds = new HashMap<>();
            for (String t : eventTopics) {
                for (int p = 0; p < Topics.specs(topics, List.of(t)).get(0).partitions(); p++) {
                    inputEnds.put(new TopicPartition(t, p), OffsetSpec.latest());
                }
            }
            // A task never commits a partition it got no record of (a workload of one key fills one partition only).
            for (var e : admin.listOffsets(inputEnds).all().get().entrySet()) {
                if (committed.get(e.getKey()) == null && e.getValue().offset() > 0) return false; // that task never committed yet
            }
        } catch (Exception e) {
            return false; // the broker is restarting
        }
        return lag(appId).isEmpty();
    }

    /**
     * Waits until the aggregation has committed all its input (lag 0), every bucket in Cosmos equals the
     * truth and the DLQ holds exactly the expected records by reason. Fails after {@code timeout} with
     * the differences, the lag of both groups and the tail of every instance's log.
     */
    public Duration awaitConverged(Truth truth, Duration timeout) throws InterruptedException {
        return awaitConverged(truth, timeout, java.util.function.UnaryOperator.identity());
    }

    /** As {@link #awaitConverged(Truth, Duration)}, judging with the truth's judge as {@code judging} sets it up. */
    public Duration awaitConverged(Truth truth, Duration timeout, java.util.function.UnaryOperator<GroundTruthJudge> judging)
            throws InterruptedException {
        long t0 = System.nanoTime();
        long deadline = t0 + timeout.toNanos();
        GroundTruthJudge judge = judging.apply(truth.judge());
        Verdict last = null;
        Map<String, Long> dlq = Map.of();
        String lastError = "";
        long nextProgress = t0 + PROGRESS_EVERY.toNanos();
        while (System.nanoTime() < deadline) {
            Verdict now = null;
            try {
                if (aggregationDrained()) {
                    now = last = judge.judge(container());
                    if (last.couldNotRead()) lastError = last.summary();
                    if (last.equal()) {
                        dlq = deadLettersByReason();
                        if (dlq.equals(truth.nonZeroDlq())) {
                            Duration took = Duration.ofNanos(System.nanoTime() - t0);
                            log.info("[{}] converged after {} s: {}; DLQ {}", name, took.toSeconds(), last, dlq);
                            return took;
                        }
                    }
                }
            } catch (RuntimeException e) {
                lastError = e.toString(); // a broker or Cosmos that is coming back; try again
            }
            if (System.nanoTime() > nextProgress) {
                nextProgress += PROGRESS_EVERY.toNanos();
                if (now == null) now = last = judge.judge(container());
                log.info("[{}] waiting {} s: {}; sink lag {}", name, Duration.ofNanos(System.nanoTime() - t0).toSeconds(),
                        now.summary(), lagQuietly(sinkGroup));
            }
            Thread.sleep(2000);
        }
        StringBuilder m = new StringBuilder("[" + name + "] not converged after " + timeout.toSeconds() + " s\n");
        m.append("  cosmos: ").append(last == null ? judge.judge(container()) : last).append('\n');
        m.append("  DLQ: ").append(dlq).append(", expected ").append(truth.nonZeroDlq()).append('\n');
        m.append("  aggregation lag: ").append(lagQuietly(appId)).append("; sink lag: ").append(lagQuietly(sinkGroup)).append('\n');
        if (!lastError.isEmpty()) m.append("  last error: ").append(lastError).append('\n');
        for (IngestNode n : nodes) {
            m.append("  ").append(n.name).append(" (").append(n.role).append(n.isAlive() ? ", running" : ", not running")
                    .append(", started ").append(n.starts()).append("x):\n").append(n.logTail()).append('\n');
        }
        throw new AssertionError(m.toString());
    }

    private String lagQuietly(String group) {
        try {
            return lag(group).toString();
        } catch (RuntimeException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    public Admin admin() {
        Map<String, Object> config = new HashMap<>(kafkaClientSettings);
        config.putAll(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000));
        return Admin.create(config);
    }

    // --- the stale-write watcher ---------------------------------------------------------------

    /** Starts sampling every stored {@code ver}; any that goes lower than seen before is a stale write winning. */
    public VersionWatch watchVersions() {
        return new VersionWatch(Set.of());
    }

    /**
     * As {@link #watchVersions()}, and also every grade bucket of {@code rules}: its count in the document holding it
     * never goes down between two samples (a grade a rules change keeps is never reset, whatever happens around it).
     */
    public VersionWatch watchVersionsAndCounts(Set<String> rules) {
        return new VersionWatch(Set.copyOf(rules));
    }

    public final class VersionWatch implements AutoCloseable {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<String> regressions = new CopyOnWriteArrayList<>();
        private final AtomicLong samples = new AtomicLong();
        private final Thread thread;
        private final Set<String> countedRules;

        private VersionWatch(Set<String> countedRules) {
            this.countedRules = countedRules;
            thread = new Thread(this::run, "ver-watch-" + name);
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            Map<String, Long> seen = new HashMap<>();
            while (running.get()) {
                try {
                    Map<String, JsonNode> now = stored();
                    for (Map.Entry<String, JsonNode> e : now.entrySet()) {
                        long ver = e.getValue().path("ver").asLong();
                        Long before = seen.put(e.getKey(), ver);
                        if (before != null && ver < before) regressions.add(e.getKey() + ": ver " + before + " -> " + ver);
                        if (!countedRules.isEmpty()) counts(e.getKey(), e.getValue()).forEach((grade, count) -> {
                            Long had = seen.put(grade, count);
                            if (had != null && count < had) regressions.add(grade + ": count " + had + " -> " + count);
                        });
                    }
                    if (!now.isEmpty()) samples.incrementAndGet();
                    Thread.sleep(3000);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // Cosmos in an outage: no observation this round
                }
            }
        }

        /** The counts of the followed rules' grade buckets in one document, by {@code docKey#grade[#minute]}. */
        private Map<String, Long> counts(String docKey, JsonNode doc) {
            Map<String, Long> out = new HashMap<>();
            doc.path("grades").fields().forEachRemaining(g -> {
                if (countedRules.contains(g.getKey())) out.put(docKey + "#" + g.getKey(), count(g.getValue()));
            });
            doc.path("qualified").fields().forEachRemaining(r -> {
                if (countedRules.contains(r.getKey())) r.getValue().fields().forEachRemaining(q ->
                        out.put(docKey + "#" + r.getKey() + ":" + q.getKey(), count(q.getValue())));
            });
            doc.path("minutes").fields().forEachRemaining(r -> {
                if (countedRules.contains(r.getKey())) r.getValue().fields().forEachRemaining(m ->
                        out.put(docKey + "#" + r.getKey() + "#" + m.getKey(), count(m.getValue())));
            });
            return out;
        }

        /** A grade's count: the first element of {@code [count, sum, min, max]}, or {@code count} of the older object form. */
        private static long count(JsonNode grade) {
            return grade.isArray() ? grade.path(0).asLong() : grade.path("count").asLong();
        }

        /** Samples of a non-empty container taken so far: the watch saw something. */
        public long samples() {
            return samples.get();
        }

        public List<String> regressions() {
            return List.copyOf(regressions);
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.interrupt();
            thread.join(10_000);
        }
    }

    @Override
    public void close() {
        for (IngestNode n : nodes) {
            try {
                n.stop();
            } catch (AssertionError | RuntimeException e) {
                log.warn("[{}] {} did not stop cleanly: {}", name, n.name, e.getMessage());
                n.close();
            }
        }
        try {
            client.getDatabase(database).delete().block(Duration.ofSeconds(20));
        } catch (RuntimeException e) {
            // never created, or Cosmos is down; the next run uses another database
        }
        client.close();
    }

    /**
     * Loadgen's ground truth of one run, as written to its file: expected buckets ({@code pk|id} -> the
     * aggregations its rule lists) and DLQ records by reason.
     */
    public record Truth(Map<String, JsonNode> buckets, Map<String, Long> dlq, long accepted, long duplicates, Loadgen.Summary summary) {
        static Truth read(Path file, Loadgen.Summary summary) {
            try {
                JsonNode root = JSON.readTree(file.toFile());
                Map<String, JsonNode> buckets = new HashMap<>();
                root.get("buckets").fields().forEachRemaining(pk -> pk.getValue().fields()
                        .forEachRemaining(id -> buckets.put(pk.getKey() + "|" + id.getKey(), id.getValue())));
                Map<String, Long> dlq = new TreeMap<>();
                root.get("expected").get("dlq").fields().forEachRemaining(f -> dlq.put(f.getKey(), f.getValue().asLong()));
                return new Truth(buckets, dlq, root.get("expected").get("accepted").asLong(),
                        root.get("expected").get("duplicates").asLong(), summary);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the ground truth " + file, e);
            }
        }

        /** Expected DLQ records by reason, reasons with none left out (as a count of the topic has them). */
        public Map<String, Long> nonZeroDlq() {
            Map<String, Long> out = new TreeMap<>();
            dlq.forEach((k, v) -> {
                if (v > 0) out.put(k, v);
            });
            return out;
        }

        /** Every bucket document the run must leave in Cosmos, every field (GroundTruthJudge#of). */
        GroundTruthJudge judge() {
            return GroundTruthJudge.of(summary.truth().orElseThrow());
        }

        /** Every reason is represented and duplicates were sent: the scenario cannot pass vacuously. */
        public void assertExercisesEverything() {
            List<String> absent = new ArrayList<>();
            dlq.forEach((k, v) -> {
                if (v == 0) absent.add("no " + k + " record");
            });
            if (duplicates == 0) absent.add("no duplicate");
            if (buckets.size() < 100) absent.add("only " + buckets.size() + " buckets");
            if (!absent.isEmpty()) throw new AssertionError("the workload does not exercise every case: " + absent);
        }
    }
}
