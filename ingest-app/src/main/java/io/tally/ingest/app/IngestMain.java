package io.tally.ingest.app;

import com.azure.cosmos.CosmosAsyncClient;
import io.tally.config.ConfigException;
import io.tally.cosmos.CosmosClients;
import io.tally.ingest.sink.BucketSink;
import io.tally.ingest.topology.BucketDocumentSerde;
import io.tally.ingest.topology.TallyTopology;
import io.tally.model.BucketDocument;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
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
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean failed;

    public IngestMain(IngestSettings settings) {
        this.settings = settings;
    }

    public static void main(String[] args) throws InterruptedException {
        IngestSettings settings;
        try {
            settings = IngestSettings.load(args, System.getenv());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
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
        if (settings.runsAggregation()) startAggregation();
        if (settings.runsSink()) startSink();
    }

    private void startAggregation() {
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, TallyTopology.eventDeserializer(new SchemaRegistryClient(settings.schemaRegistryUrl())));
        streams = new KafkaStreams(builder.build(), streamsProperties());
        streams.setUncaughtExceptionHandler(e -> {
            log.error("stream thread failed; replacing it (the failed task restarts from its last commit)", e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.setStateListener((now, before) -> log.info("kafka streams {} -> {}", before, now));
        streams.start();
    }

    Properties streamsProperties() {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, settings.applicationId());
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.STATE_DIR_CONFIG, settings.stateDir().toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, settings.commitInterval().toMillis());
        p.putAll(settings.kafkaOverrides());
        return p;
    }

    private void startSink() {
        cosmos = CosmosClients.build(settings.cosmos());
        var container = CosmosClients.container(cosmos, settings.cosmos());
        Map<String, Object> c = new java.util.HashMap<>(settings.kafkaOverrides());
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        c.put(ConsumerConfig.GROUP_ID_CONFIG, settings.sinkGroupId());
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // only buckets of committed Streams transactions
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);         // offsets move only after Cosmos has the data
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        KafkaConsumer<String, BucketDocument> consumer =
                new KafkaConsumer<>(c, new StringDeserializer(), BucketDocumentSerde.serde().deserializer());
        consumer.subscribe(List.of(Topics.BUCKET_UPDATES));
        sink = new BucketSink(consumer, container, settings.sinkPollTimeout());
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
        if (streams != null) streams.close(java.time.Duration.ofSeconds(30));
        if (cosmos != null) cosmos.close();
        stopped.countDown();
        log.info("ingest-app stopped");
    }
}
