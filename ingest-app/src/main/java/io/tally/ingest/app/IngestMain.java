package io.tally.ingest.app;

import com.azure.cosmos.CosmosAsyncClient;
import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.cosmos.CosmosClients;
import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import io.tally.ingest.sink.BucketSink;
import io.tally.ingest.topology.TallyTopology;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.topics.TopicProvisioner;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs the aggregation role, the sink role, or both, until stopped. Owns every lifecycle; wires, decides nothing. */
public final class IngestMain implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IngestMain.class);

    private final IngestSettings settings;
    private KafkaStreams streams;
    private CosmosAsyncClient cosmos;
    private BucketSink sink;
    private Thread sinkThread;
    private final io.micrometer.prometheusmetrics.PrometheusMeterRegistry registry =
            new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
    private StreamRestarts restarts;
    private IngestEndpoint endpoint;
    private java.util.concurrent.ScheduledExecutorService streamsMetricsRefresh;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean failed;

    static final String USAGE = """
            Usage: ./tally ingest [--key=value ...]      (or: java -jar ingest-app.jar [--key=value ...])
                   ./tally replay --help                 rebuild a historical event-time range (a batch job)

            Runs ingest-app until stopped: the aggregation (Kafka Streams, exactly-once: decode, validate, dedupe,
            fan out by the grade rules, aggregate into bucket-updates) and the Cosmos sink (coalesce, bulk write,
            commit after the write), one or both as --ingest.role says. kafka.* keys not listed pass through to
            the Kafka clients. Exit status: 1 when it could not start or the sink stopped, 2 for invalid settings.
            """;

    public IngestMain(IngestSettings settings) {
        this.settings = settings;
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length > 0 && args[0].equals("replay")) { // ./tally replay: a bounded batch job, not a role
            io.tally.ingest.replay.ReplayMain.main(java.util.Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (Help.requested(args)) {
            System.out.print(Help.text(USAGE, IngestSettings.all()));
            return;
        }
        IngestSettings settings;
        try {
            settings = IngestSettings.load(args, System.getenv());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.err.println("(./tally ingest --help lists every setting)");
            System.exit(2);
            return;
        }
        IngestMain app = new IngestMain(settings);
        Runtime.getRuntime().addShutdownHook(new Thread(app::close, "ingest-shutdown"));
        try {
            app.start();
        } catch (RuntimeException e) {
            // Half-started (say Streams running, Cosmos unreachable) is worse than stopped: exit so a supervisor restarts us.
            log.error("ingest-app could not start", e);
            System.exit(1);
        }
        app.stopped.await();
        if (app.failed) System.exit(1);
    }

    public void start() {
        log.info("ingest-app starting: role={}, kafka={}, cosmos={}", settings.role(), settings.bootstrapServers(), settings.cosmos());
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers()))) {
            new TopicProvisioner(admin).ensure(Topics.specs(settings.topics()), settings.createMissingTopics());
            if (settings.runsAggregation()) warnIfTransactionsV2(admin);
        }
        new io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics().bindTo(registry); // heap stays bounded with any backlog
        new io.micrometer.core.instrument.binder.jvm.JvmGcMetrics().bindTo(registry);     // live data after GC
        if (settings.runsAggregation()) startAggregation();
        if (settings.runsSink()) startSink();
        startEndpoint();
    }

    /** /metrics and /health for whichever roles run (the port setting is named after the sink, which had it first). */
    private void startEndpoint() {
        int port = settings.sink().metricsPort();
        if (port < 0) return;
        IngestHealth health = new IngestHealth(streams, restarts,
                settings.runsSink() ? () -> sinkThread.isAlive() && !failed : null);
        try {
            endpoint = new IngestEndpoint(registry, port, health::report);
            log.info("metrics and health on http://0.0.0.0:{}/metrics, /health/live, /health/ready", endpoint.port());
        } catch (java.io.UncheckedIOException e) { // metrics must not stop the data path
            log.error("no Prometheus endpoint: {}", e.getMessage());
        }
    }

    private void startAggregation() {
        AggregationSettings agg = settings.aggregation();
        GradeRules rules = GradeRules.load(agg.rulesLocation());
        log.info("grade rules from {}: {}", agg.rulesLocation(), rules.rules().stream().map(GradeRule::name).toList());
        if (agg.topology().lateBound().compareTo(rules.longestRetention()) < 0) {
            log.warn("ingest.late-bound.ms ({}) is shorter than the longest rule retention ({}): events between the two go to the DLQ as LATE",
                    agg.topology().lateBound(), rules.longestRetention());
        }
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, settings.topics(), agg.topology(), rules,
                TallyTopology.eventDeserializer(new SchemaRegistryClient(settings.schemaRegistryUrl())));
        streams = new KafkaStreams(builder.build(), streamsProperties());
        restarts = new StreamRestarts(agg.restartBackoff(), registry);
        streams.setUncaughtExceptionHandler(restarts); // replace a failed thread, after a bounded exponential wait
        bindStreamsMetrics(registry);
        streams.setStateListener((now, before) -> {
            log.info("kafka streams {} -> {}", before, now);
            restarts.streamsStateChanged(now);
        });
        streams.start();
    }

    /**
     * Kafka 4.3.1 brokers with transaction.version=2 (their default) make exactly-once Streams
     * producers fail again and again with OutOfOrderSequenceException on internal topics; tasks abort
     * and restart, so nothing is lost or counted twice, but throughput drops several times over.
     */
    private static void warnIfTransactionsV2(Admin admin) {
        try {
            var tv = admin.describeFeatures().featureMetadata().get(10, java.util.concurrent.TimeUnit.SECONDS)
                    .finalizedFeatures().get("transaction.version");
            if (tv != null && tv.maxVersionLevel() >= 2) {
                log.warn("the Kafka cluster runs transaction.version={}: exactly-once producers on Kafka 4.3.1 keep failing with "
                        + "OutOfOrderSequenceException and restarting tasks; consider 'kafka-features --bootstrap-server ... downgrade "
                        + "--feature transaction.version=1' (see docs/aggregation.md)", tv.maxVersionLevel());
            }
        } catch (Exception e) {
            log.debug("could not read the cluster's finalized features", e);
        }
    }

    Properties streamsProperties() {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, settings.applicationId());
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, settings.stateDir().toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, settings.commitInterval().toMillis());
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, settings.aggregation().streamThreads());
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, settings.aggregation().standbyReplicas());
        p.putAll(AggregationSettings.STREAMS_DEFAULTS);
        p.putAll(settings.kafkaOverrides());
        return p;
    }

    private void startSink() {
        io.tally.ingest.sink.SinkSettings sinkSettings = settings.sink();
        // The sink owns throttling (see docs/sink.md): its client hands 429s over after sink.sdk-throttle-retries.
        cosmos = CosmosClients.build(settings.cosmos(), b -> b.throttlingRetryOptions(new com.azure.cosmos.ThrottlingRetryOptions()
                .setMaxRetryAttemptsOnThrottledRequests(sinkSettings.throttleRetriesInSdk())));
        var container = CosmosClients.container(cosmos, settings.cosmos());
        CosmosClients.warmUp(container, settings.cosmos());
        Map<String, Object> c = new java.util.HashMap<>(settings.kafkaOverrides());
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        sink = BucketSink.create(sinkSettings, settings.topics(), c, container,
                new io.tally.ingest.sink.SinkMetrics(registry));
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

    /**
     * Kafka Streams' own metrics (records consumed per topic, consumer lag, records sent per topic) on the
     * same endpoint, so one scrape shows the whole pipeline ({@code ./tally demo} reads it). Per-topic
     * meters appear only after a first fetch; micrometer looks for new ones every 60 s unless told sooner.
     */
    private void bindStreamsMetrics(io.micrometer.core.instrument.MeterRegistry registry) {
        streamsMetricsRefresh = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "streams-metrics-refresh");
            t.setDaemon(true);
            return t;
        });
        new io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics(streams, java.util.List.of(), streamsMetricsRefresh,
                java.time.Duration.ofSeconds(2)).bindTo(registry);
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
        if (restarts != null) restarts.close(); // a thread waiting to be replaced stops waiting
        if (streams != null) streams.close(java.time.Duration.ofSeconds(30));
        if (endpoint != null) endpoint.close();
        if (streamsMetricsRefresh != null) streamsMetricsRefresh.shutdownNow();
        if (cosmos != null) cosmos.close();
        stopped.countDown();
        log.info("ingest-app stopped");
    }
}
