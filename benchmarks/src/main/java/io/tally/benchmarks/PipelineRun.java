package io.tally.benchmarks;

import com.azure.cosmos.CosmosAsyncContainer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.search.Search;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.sink.SinkMetrics;
import io.tally.loadgen.Loadgen;
import io.tally.loadgen.LoadgenSettings;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
import io.tally.rules.GradeRules;
import io.tally.schemas.Topics;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.truth.GroundTruthJudge;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One end-to-end run's world on the shared broker, registry and Cosmos endpoint: its own topics (a
 * unique {@code topics.prefix}), Streams application id, sink group and Cosmos database, an ingest-app
 * running both roles and a read-service, all in this JVM. Offers what the benchmark observes: Kafka
 * offsets of both stages, the sink's counters, and Cosmos judged against loadgen's ground truth.
 */
final class PipelineRun implements AutoCloseable {
    static final String CONTAINER = "buckets";

    final String name;
    final TestKafka kafka;
    final LocalCosmos cosmos;
    final String registryUrl;
    final String id = UUID.randomUUID().toString().substring(0, 6);
    final Topics.Names topics;
    final String applicationId;
    final String sinkGroup;
    final String database;
    /** The rules file of ingest-app, read-service and loadgen's ground truth; null: their default rules. */
    final String rulesFile;
    /** ingest-app's settings of this run but its rules file, then those the caller added (which win): kept by a restart. */
    private final String[] ingestArgs;
    private final String[] ingestFlags;
    private IngestApp ingest;
    private final ReadMain read;
    private final Admin admin;
    private Map<Integer, Long> inputTarget;
    private Map<String, Map<Integer, Long>> repartitionTarget;
    private Map<Integer, Long> updatesTarget;

    /**
     * @param rulesFile   the grade rules of the whole run (aggregation, reads, ground truth); null: the default rules
     * @param ingestFlags ingest-app settings beyond the run's own (its defaults otherwise)
     */
    PipelineRun(String name, TestKafka kafka, String registryUrl, LocalCosmos cosmos, String rulesFile, String... ingestFlags)
            throws IOException {
        this.name = name;
        this.rulesFile = rulesFile;
        this.kafka = kafka;
        this.cosmos = cosmos;
        this.registryUrl = registryUrl;
        String prefix = "e2e-" + name + "-" + id + ".";
        this.topics = Topics.Names.withPrefix(prefix);
        this.applicationId = "e2e-" + name + "-" + id;
        this.sinkGroup = "e2e-sink-" + name + "-" + id;
        this.database = "e2e-" + name + "-" + id;
        // Created (and their leaders awaited) before anything produces: KAFKA-15591.
        kafka.createTopics(Topics.specs(topics).stream().map(s -> TestKafka.topic(s.name(), s.partitions(), s.configs())).toList());
        String[] cosmosFlags = {"--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + database};
        this.ingestArgs = concat(cosmosFlags, "--ingest.role=both",
                "--kafka.bootstrap.servers=" + kafka.bootstrapServers(), "--schema.registry.url=" + registryUrl,
                "--topics.prefix=" + prefix, "--ingest.application-id=" + applicationId, "--sink.group-id=" + sinkGroup,
                "--ingest.state-dir=" + Files.createTempDirectory("e2e-state"), "--sink.metrics.port=-1");
        this.ingestFlags = ingestFlags;
        ingest = newIngest(rulesFile);
        read = new ReadMain(ReadSettings.load(concat(cosmosFlags, "--read.http.port=0",
                "--read.rules-file=" + (rulesFile == null ? GradeRules.BUILTIN_DEFAULT : rulesFile)), Map.of()));
        admin = kafka.admin();
    }

    private IngestApp newIngest(String rules) {
        String[] args = rules == null ? ingestArgs : concat(ingestArgs, "--ingest.rules.file=" + rules);
        return new IngestApp(IngestSettings.load(concat(args, ingestFlags), Map.of()));
    }

    /**
     * Closes ingest-app and starts it again counting {@code rules}, with the same topics, application id, sink group and
     * state directory: what a supervisor does once an applied rules generation stopped it. read-service and the ground
     * truth keep the run's rules file.
     */
    void restartIngest(String rules) {
        ingest.close();
        ingest = newIngest(rules);
        ingest.start();
    }

    IngestApp ingest() {
        return ingest;
    }

    /**
     * The settings of this run's ingest-app, then {@code extra} (which win), for a command run against the same
     * deployment: {@code rules apply}, {@code rules backfill}, {@code replay}.
     */
    List<String> commandFlags(String... extra) {
        List<String> out = new ArrayList<>(List.of(ingestArgs));
        out.addAll(List.of(ingestFlags));
        out.addAll(List.of(extra));
        return out;
    }

    /** The Streams application's repartition topic (stage 4), where stage 3's commits become visible. */
    String repartitionTopic() {
        return io.tally.ingest.topology.TallyTopology.repartitionTopic(applicationId);
    }

    /** Starts ingest-app (creates the database and container) and then read-service. */
    PipelineRun start() {
        ingest.start();
        read.start();
        return this;
    }

    /** The grade rules this run aggregates by. */
    GradeRules rules() {
        return GradeRules.load(rulesFile == null ? GradeRules.BUILTIN_DEFAULT : rulesFile);
    }

    int readPort() {
        return read.port();
    }

    /** Produces with loadgen into this run's transactions topic; blocks until every record has a result. */
    Loadgen.Summary produce(long events, String... extra) throws IOException {
        List<String> flags = new ArrayList<>(List.of("--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--schema.registry.url=" + registryUrl, "--loadgen.topic=" + topics.transactions(), "--loadgen.events=" + events,
                "--loadgen.rate=0", "--loadgen.domain=bench",
                "--loadgen.ground-truth-file=" + Files.createTempDirectory("e2e-truth").resolve("ground-truth.json")));
        if (rulesFile != null) flags.add("--loadgen.rules-file=" + rulesFile);
        flags.addAll(List.of(extra));
        Loadgen.Summary s = Loadgen.run(LoadgenSettings.load(flags.toArray(String[]::new), Map.of()),
                new PrintStream(OutputStream.nullOutputStream()));
        if (s.failed() > 0) throw new IllegalStateException(name + ": " + s.failed() + " events not acknowledged; " + s.aborted().orElse(""));
        return s;
    }

    SinkMetrics sinkMetrics() {
        return ingest.sink().metrics();
    }

    double sinkCounter(String meter, String outcome) {
        Search s = Search.in(sinkMetrics().registry()).name(meter);
        if (outcome != null) s = s.tag("outcome", outcome);
        Counter c = s.counter();
        return c == null ? 0 : c.count();
    }

    double sinkGauge(String meter) {
        Gauge g = Search.in(sinkMetrics().registry()).name(meter).gauge();
        return g == null ? 0 : g.value();
    }

    /** Documents the sink finished writing (written + refused as stale + dead-lettered). */
    double documentsWritten() {
        return sinkCounter("tally.sink.documents.written", "written") + sinkCounter("tally.sink.documents.written", "stale")
                + sinkCounter("tally.sink.documents.written", "dead_lettered");
    }

    double requestUnits() {
        return sinkCounter("tally.sink.request.units", null);
    }

    int inFlightDocuments() {
        return ingest.sink().writer().inFlightDocuments();
    }

    /** Sum of the end offsets of a topic's partitions, per partition in {@code perPartition} when given. */
    long endOffsets(String topic, Map<Integer, Long> perPartition) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()
                .forEach(p -> req.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
        long sum = 0;
        for (var e : admin.listOffsets(req).all().get().entrySet()) {
            sum += e.getValue().offset();
            if (perPartition != null) perPartition.put(e.getKey().partition(), e.getValue().offset());
        }
        return sum;
    }

    /** Every record of this run's transactions topic, from its start to its end as of the call. */
    void readInput(Consumer<ConsumerRecord<byte[], byte[]>> each) throws Exception {
        String topic = topics.transactions();
        Map<Integer, Long> ends = new HashMap<>();
        endOffsets(topic, ends);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = ends.keySet().stream().map(p -> new TopicPartition(topic, p)).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Set<TopicPartition> open = new HashSet<>(partitions);
            open.removeIf(tp -> ends.get(tp.partition()) == 0);
            while (!open.isEmpty()) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    long end = ends.get(r.partition());
                    if (r.offset() >= end - 1) open.remove(new TopicPartition(topic, r.partition()));
                    if (r.offset() < end) each.accept(r);
                }
            }
        }
    }

    /** A group's committed offsets on one topic, by partition. */
    Map<Integer, Long> committed(String group, String topic) throws Exception {
        Map<Integer, Long> out = new HashMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().entrySet()) {
            if (e.getKey().topic().equals(topic) && e.getValue() != null) out.put(e.getKey().partition(), e.getValue().offset());
        }
        return out;
    }

    /**
     * Null when the pipeline has worked through everything produced up to the first call (call it once
     * loadgen has finished), stage by stage: Streams has committed every event then in the input, then every
     * record its first sub-topology had written to its repartition topic by then, and the sink every bucket
     * update emitted by the time Streams had. Else what is still outstanding. The freshness probe keeps
     * producing meanwhile, hence targets instead of "nothing left". A consumer commits up to its last record;
     * on a transactional topic a commit marker may follow it, hence {@code target - 1} there.
     */
    String outstanding() throws Exception {
        if (inputTarget == null) inputTarget = endOffsetsByPartition(topics.transactions());
        String behind = behind("aggregation (input)", applicationId, Map.of(topics.transactions(), inputTarget), 0);
        if (behind != null) return behind;
        if (repartitionTarget == null) {
            repartitionTarget = new HashMap<>();
            for (String t : internalTopics()) repartitionTarget.put(t, endOffsetsByPartition(t));
        }
        behind = behind("aggregation (repartitioned)", applicationId, repartitionTarget, 1);
        if (behind != null) return behind;
        if (updatesTarget == null) updatesTarget = endOffsetsByPartition(topics.bucketUpdates());
        return behind("sink", sinkGroup, Map.of(topics.bucketUpdates(), updatesTarget), 1);
    }

    /** The topics other than the input that the Streams group consumes: its repartition topics. */
    private List<String> internalTopics() throws Exception {
        return admin.listConsumerGroupOffsets(applicationId).partitionsToOffsetAndMetadata().get().keySet().stream()
                .map(TopicPartition::topic).distinct().filter(t -> !t.equals(topics.transactions())).toList();
    }

    /** The next {@link #outstanding()} measures against what has been produced by then, not by its first call. */
    void newDrainTargets() {
        inputTarget = null;
        repartitionTarget = null;
        updatesTarget = null;
    }

    private String behind(String stage, String group, Map<String, Map<Integer, Long>> targets, long slack) throws Exception {
        for (Map.Entry<String, Map<Integer, Long>> topic : targets.entrySet()) {
            Map<Integer, Long> committed = committed(group, topic.getKey());
            for (var e : topic.getValue().entrySet()) {
                if (e.getValue() > 0 && committed.getOrDefault(e.getKey(), 0L) < e.getValue() - slack) {
                    return String.format(java.util.Locale.ROOT, "%s: %,d of %,d offsets committed", stage,
                            committed.values().stream().mapToLong(Long::longValue).sum(),
                            topic.getValue().values().stream().mapToLong(Long::longValue).sum());
                }
            }
        }
        return null;
    }

    private Map<Integer, Long> endOffsetsByPartition(String topic) throws Exception {
        Map<Integer, Long> out = new HashMap<>();
        endOffsets(topic, out);
        return out;
    }

    /**
     * Every bucket of the ground truth against this run's container, every field, and no document beyond
     * it. The freshness probe's markers are events loadgen never sent, so the buckets they make in the
     * probe's own domain are not the truth's to judge.
     */
    GroundTruthJudge judge(GroundTruth truth) {
        return GroundTruthJudge.of(truth).ignoringExtraInDomain(FreshnessProbe.DOMAIN);
    }

    CosmosAsyncContainer container() {
        return cosmos.asyncClient().getDatabase(database).getContainer(CONTAINER);
    }

    @Override
    public void close() {
        read.close();
        ingest.close();
        admin.close();
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
