package io.tally.ingest.app;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.ThrottlingRetryOptions;
import io.tally.cosmos.CosmosClients;
import io.tally.ingest.rules.DeploymentRules;
import io.tally.ingest.rules.RulesWatch;
import io.tally.ingest.topology.CountedGrades;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesStateStore;
import java.time.Instant;
import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import io.tally.rules.source.RuleFields;
import io.tally.rules.source.Sources;
import io.tally.ingest.source.SourceCheck;
import io.tally.ingest.source.SourceTopics;
import io.tally.ingest.sink.BucketSink;
import io.tally.ingest.sink.CosmosBulkExecutor;
import io.tally.ingest.sink.SinkMetrics;
import io.tally.ingest.sink.SinkSettings;
import io.tally.ingest.topology.TallyTopology;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SchemaRegistryException;
import io.tally.schemas.topics.TopicProvisioner;
import io.tally.schemas.topics.TransactionVersionCheck;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ingest-app's roles: the aggregation, the sink, or both, until stopped. Owns every lifecycle (Kafka Streams, the
 * sink thread, the Cosmos client, the metrics endpoint); wires, decides nothing. The jar's entry class
 * ({@code io.tally.ingest.Main}) loads the settings and runs it.
 */
public final class IngestApp implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IngestApp.class);

    private final IngestSettings settings;
    private final IngestMetrics metrics = new IngestMetrics();
    private KafkaStreams streams;
    private CosmosAsyncClient cosmos;
    private CosmosAsyncContainer container;
    private RulesWatch rulesWatch;
    private BucketSink sink;
    private Thread sinkThread;
    private StreamRestarts restarts;
    private IngestEndpoint endpoint;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean failed;
    /** The sources file, read once: topic provisioning and the aggregation both need it. */
    private SourceTopics sources;

    public IngestApp(IngestSettings settings) {
        this.settings = settings;
    }

    public void start() {
        log.info("ingest-app starting: role={}, kafka={}, cosmos={}", settings.role(), settings.bootstrapServers(), settings.cosmos());
        provisionTopics();
        if (settings.runsAggregation()) startAggregation();
        if (settings.runsSink()) startSink();
        startEndpoint();
    }

    /** Blocks until the app stopped (closed, or the sink failed); true when it stopped because the sink failed. */
    public boolean awaitStopped() throws InterruptedException {
        stopped.await();
        return failed;
    }

    private void provisionTopics() {
        try (Admin admin = Admin.create(settings.kafka().adminConfig(settings.topicsTimeout()))) {
            for (TopicProvisioner.Outcome t : new TopicProvisioner(admin, settings.topicsTimeout())
                    .ensure(Topics.specs(settings.topics(), eventTopics()), settings.createMissingTopics())) {
                if (t.created()) log.info("created topic {} ({} partitions)", t.name(), t.partitions());
                t.notes().forEach(n -> log.warn("topic {} has {}", t.name(), n));
            }
            if (settings.runsAggregation()) TransactionVersionCheck.warning(admin).ifPresent(log::warn);
        }
    }

    /** /metrics and /health for whichever roles run (the port setting is named after the sink, which had it first). */
    private void startEndpoint() {
        int port = settings.sink().metricsPort();
        if (port < 0) return;
        IngestHealth health = new IngestHealth(streams, restarts,
                settings.runsSink() ? () -> sinkThread.isAlive() && !failed : null);
        try {
            endpoint = new IngestEndpoint(metrics.registry(), port, health::report);
            log.info("metrics and health on http://0.0.0.0:{}/metrics, /health/live, /health/ready", endpoint.port());
        } catch (UncheckedIOException e) { // metrics must not stop the data path
            log.error("no Prometheus endpoint: {}", e.getMessage());
        }
    }

    private void startAggregation() {
        AggregationSettings agg = settings.aggregation();
        SourceTopics sources = sources();
        DeploymentRules.RulesFile file = DeploymentRules.RulesFile.load(agg.rulesLocation(), sources.sources());
        GradeRules rules = file.rules();
        if (agg.topology().lateBound().compareTo(rules.longestRetention()) < 0) {
            log.warn("ingest.late-bound.ms ({}) is shorter than the longest rule retention ({}): events between the two go to the DLQ as LATE",
                    agg.topology().lateBound(), rules.longestRetention());
        }
        SchemaRegistryClient registry = new SchemaRegistryClient(settings.registryClient());
        // files that cannot serve the schemas are refused before anything is recorded of them
        checkSources(agg.sourcesLocation(), sources, RuleFields.of(rules), registry);
        DeploymentRules deployment = new DeploymentRules(new RulesStateStore(container()));
        RulesState counted = deployment.counted(file, Instant.now()); // refuses a file other than the applied one
        log.info("grade rules from {} (generation {}): {}", agg.rulesLocation(), counted.generation(),
                rules.rules().stream().map(GradeRule::name).toList());
        counted.grades().stream().filter(g -> !g.complete()).forEach(g -> log.info(
                "grade {} counted live from {}; its history before that is pending (./tally rules backfill)", g.grade(), g.countingFrom()));
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, settings.topics(), agg.topology(), rules, CountedGrades.of(counted), sources,
                TallyTopology.eventDeserializer(registry));
        streams = new KafkaStreams(builder.build(), streamsProperties());
        restarts = new StreamRestarts(agg.restartBackoff(), metrics.registry());
        streams.setUncaughtExceptionHandler(restarts); // replace a failed thread, after a bounded exponential wait
        metrics.bind(streams);
        streams.setStateListener((now, before) -> {
            log.info("kafka streams {} -> {}", before, now);
            restarts.streamsStateChanged(now);
            if (now == KafkaStreams.State.ERROR) stopFailed("the aggregation stopped (see the error above)");
        });
        streams.start();
        rulesWatch = new RulesWatch(deployment, counted.generation(), agg.rulesWatchInterval(),
                () -> stopFailed("a newer rules generation was applied"));
    }

    /** Ends the process's run as failed: Main exits non-zero, so a supervisor restarts it (with the applied rules). */
    private void stopFailed(String why) {
        log.error("ingest-app stopping: {}", why);
        failed = true;
        stopped.countDown();
    }

    /**
     * The event topics to provision: the sources' listed topics when this process aggregates (a sink-only process has
     * no sources to read; it provisions the shipped transactions topic as before, harmless where it exists).
     */
    private List<String> eventTopics() {
        if (!settings.runsAggregation()) return List.of(settings.topics().transactions());
        return sources().named();
    }

    private SourceTopics sources() {
        if (sources == null) sources = new SourceTopics(Sources.load(settings.aggregation().sourcesLocation()), settings.topics().prefix());
        return sources;
    }

    /**
     * Refuses to start on a mapping or rule path the latest registered schema of a source's subject cannot serve.
     * With the registry unreachable the check is skipped with a warning: the same check runs per schema id as records
     * arrive, and a registry outage must not keep a restarted instance down.
     */
    private static void checkSources(String location, SourceTopics sources, RuleFields fields, SchemaRegistryClient registry) {
        SourceCheck.Report report;
        try {
            report = SourceCheck.run(sources, fields, registry, SourceCheck.registrySubjectsIfNeeded(sources, registry));
        } catch (SchemaRegistryException e) {
            log.warn("sources from {} not checked against the schema registry ({}); each writer schema is checked as its first record arrives",
                    location, e.getMessage());
            return;
        }
        report.notes().forEach(n -> log.warn("{}", n));
        report.checked().forEach(c -> log.info("checked {}", c));
        if (!report.ok()) {
            throw new IllegalStateException("the sources in " + location + " and the rules do not fit the registered schemas:\n  - "
                    + String.join("\n  - ", report.problems()) + "\n(./tally rules check shows the same without starting)");
        }
    }

    /** ingest-app's choices, then Kafka Streams' defaults it changes, then kafka.* and kafka.streams.* (which win). */
    Properties streamsProperties() {
        return streamsProperties(settings, settings.applicationId());
    }

    /** The aggregation's Kafka Streams properties under {@code applicationId} (a backfill runs as its own application). */
    public static Properties streamsProperties(IngestSettings settings, String applicationId) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, settings.stateDir().toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, settings.streamsCommitInterval().toMillis());
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, settings.aggregation().streamThreads());
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, settings.aggregation().standbyReplicas());
        p.putAll(AggregationSettings.STREAMS_DEFAULTS);
        p.putAll(settings.kafka().streams());
        return p;
    }

    /** The bucket container, its client made on first use: the sink writes there, the aggregation reads the rules record. */
    private CosmosAsyncContainer container() {
        if (container == null) {
            // The sink owns throttling (see docs/sink.md): its client hands 429s over after sink.sdk-throttle-retries.
            cosmos = CosmosClients.build(settings.cosmos(), b -> b.throttlingRetryOptions(new ThrottlingRetryOptions()
                    .setMaxRetryAttemptsOnThrottledRequests(settings.sink().throttleRetriesInSdk())));
            container = CosmosClients.container(cosmos, settings.cosmos());
        }
        return container;
    }

    private void startSink() {
        SinkSettings sinkSettings = settings.sink();
        CosmosAsyncContainer container = container();
        CosmosClients.warmUp(container, settings.cosmos());
        CosmosBulkExecutor.enableFleetBudget(cosmos, container, sinkSettings, settings.cosmos());
        sink = BucketSink.create(sinkSettings, settings.topics(), settings.kafka().consumerConfig(),
                settings.kafka().producerConfig(), container, new SinkMetrics(metrics.registry()));
        sinkThread = new Thread(() -> {
            try {
                sink.run();
            } catch (RuntimeException e) {
                log.error("sink stopped without committing its last batch; restart to resume from the last commit", e);
                failed = true;
                stopped.countDown();
            }
        }, "tally-sink");
        sinkThread.start();
    }

    public BucketSink sink() {
        return sink;
    }

    @Override
    public void close() {
        if (sink != null) {
            sink.stop();
            try {
                sinkThread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (rulesWatch != null) rulesWatch.close();
        if (restarts != null) restarts.close(); // a thread waiting to be replaced stops waiting
        if (streams != null) streams.close(Duration.ofSeconds(30));
        if (endpoint != null) endpoint.close();
        metrics.close();
        if (cosmos != null) cosmos.close();
        stopped.countDown();
        log.info("ingest-app stopped");
    }
}
