package io.tally.ingest.replay;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.ThrottlingRetryOptions;
import io.tally.cosmos.CosmosClients;
import io.tally.ingest.rules.DeploymentRules;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesStateStore;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.source.SourceReader;
import io.tally.ingest.source.SourceTopics;
import io.tally.rules.GradeRules;
import io.tally.rules.RulesException;
import io.tally.rules.source.RuleFields;
import io.tally.rules.source.Sources;
import io.tally.ingest.sink.CosmosBulkExecutor;
import io.tally.ingest.topology.EventIntake;
import io.tally.ingest.topology.EventValidator;
import io.tally.ingest.topology.FanOut;
import io.tally.ingest.topology.TallyTopology;
import io.tally.ingest.topology.TopologySettings;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code ./tally replay}: rebuilds the buckets of an event-time range from the retained input topic, as a
 * bounded batch job beside the live pipeline (not a Kafka Streams application: no state, no internal
 * topics, nothing committed; its consumer uses {@code assign()} and its own {@code replay.application-id}).
 *
 * <ol>
 *   <li>plan: per partition, the first offset at {@code from - futureSkew} and the end offset now
 *       ({@link ReplayPlan}); refuse when the topic no longer retains the start of the range</li>
 *   <li>read the planned offsets (read_committed) through the live run's stages 1-5 ({@link ReplayAggregator})</li>
 *   <li>write the buckets wholly inside the range with the sink's writer ({@link ReplayWriter})</li>
 * </ol>
 *
 * <p>Re-running is harmless: the same records give the same values and {@code ver}s, and a write never
 * replaces an equal or higher {@code ver}.
 */
public final class ReplayJob {
    private static final Logger log = LoggerFactory.getLogger(ReplayJob.class);

    public static final int EXIT_OK = 0;
    /** Writes did not all complete, or the job failed on the way (broker, registry or Cosmos unreachable). */
    public static final int EXIT_FAILED = 1;
    /** Bad arguments or settings. */
    public static final int EXIT_USAGE = 2;
    /** The topic no longer retains the start of the range. */
    public static final int EXIT_RETENTION_LOST = 3;

    private static final Duration POLL = Duration.ofMillis(200);
    private static final Duration KAFKA_TIMEOUT = Duration.ofSeconds(60);
    /** Reading gives up when no partition moves for this long (broker gone): a batch job must end. */
    private static final Duration READ_STALL = Duration.ofMinutes(2);

    private final ReplaySettings settings;
    private final ReplayProgress progress;

    public ReplayJob(ReplaySettings settings) {
        this(settings, ReplayProgress.stderr(settings.progressInterval()));
    }

    ReplayJob(ReplaySettings settings, ReplayProgress progress) {
        this.settings = settings;
        this.progress = progress;
    }

    /** Runs the job to its end. Throws {@link ReplayException} when it cannot run; a report otherwise (check {@link ReplayReport#complete()}). */
    public ReplayReport run() throws InterruptedException {
        long t0 = System.nanoTime();
        IngestSettings ingest = settings.ingest();
        TopologySettings topology = ingest.aggregation().topology();
        Sources sourcesFile = loadSources(ingest.aggregation().sourcesLocation());
        DeploymentRules.RulesFile file = loadRules(ingest.aggregation().rulesLocation(), sourcesFile);
        GradeRules rules = file.rules();
        RuleSelection selection = selection(rules);
        ReplayRange range = settings.range();
        Instant readFrom = range.from().minus(topology.maxFutureSkew());
        SourceTopics sources = new SourceTopics(sourcesFile, ingest.topics().prefix());
        RuleFields fields = RuleFields.of(rules);
        ReplayPlan plan;
        WriteTotals writes;
        ReplayAggregator aggregator;
        CosmosAsyncClient cosmos = null;
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(ingest)) {
            List<String> topics = topics(consumer, sources);
            // first what the topics still hold: a range they lost is refused before anything else is contacted
            plan = ReplayPlan.capture(consumer, topics, range.from(), readFrom, KAFKA_TIMEOUT);
            // As the sink's client: 429s reach the writer's AIMD limiter after sink.sdk-throttle-retries (docs/sink.md).
            cosmos = CosmosClients.build(ingest.cosmos(), b -> b.throttlingRetryOptions(new ThrottlingRetryOptions()
                    .setMaxRetryAttemptsOnThrottledRequests(ingest.sink().throttleRetriesInSdk())));
            var container = CosmosClients.container(cosmos, ingest.cosmos());
            RulesState counted = counted(container, file);
            log.info("replay of {} (rules {}, generation {}) from {} into {}", range, selection.names(), counted.generation(), topics,
                    ingest.cosmos().container());
            aggregator = new ReplayAggregator(
                    new EventIntake(new SourceReader(sources, fields, TallyTopology.eventDeserializer(new SchemaRegistryClient(ingest.registryClient()))),
                            EventValidator.of(topology, fields, sources.sources())),
                    new FanOut(rules, fields), selection, range, topology.dedupeHorizon(), RulesState.verFloor(counted.generation()));
            read(consumer, plan, aggregator);
            writes = write(aggregator, cosmos, container);
        } finally {
            if (cosmos != null) cosmos.close();
        }
        return new ReplayReport(ingest.cosmos().container(), range, settings.applicationId(), plan.partitions().size(),
                plan.total(), aggregator.read(), aggregator.accepted(), aggregator.rejected(), aggregator.duplicates(),
                aggregator.outsideRange(), aggregator.buckets().size(), aggregator.skippedAtBounds(), writes,
                Duration.ofNanos(System.nanoTime() - t0));
    }

    /** Every source's topics: the listed ones, and those a pattern matches now. */
    private static List<String> topics(KafkaConsumer<byte[], byte[]> consumer, SourceTopics sources) {
        List<String> out = new ArrayList<>(sources.named());
        boolean patterns = sources.sources().sources().stream().anyMatch(s -> s.topicPattern().isPresent());
        if (patterns) {
            for (String t : new TreeSet<>(consumer.listTopics(KAFKA_TIMEOUT).keySet())) {
                if (!out.contains(t) && sources.sourceOf(t).filter(s -> s.topicPattern().isPresent()).isPresent()) out.add(t);
            }
        }
        return out;
    }

    private static Sources loadSources(String location) {
        try {
            return Sources.load(location);
        } catch (RulesException e) {
            throw new ReplayException(EXIT_USAGE, e.getMessage(), e);
        }
    }

    private static DeploymentRules.RulesFile loadRules(String location, Sources sources) {
        try {
            return DeploymentRules.RulesFile.load(location, sources);
        } catch (RulesException e) {
            throw new ReplayException(EXIT_USAGE, e.getMessage(), e);
        }
    }

    /**
     * The rules generation the target container counts: a replay computes every grade over its whole range (history
     * included, so it ignores seams) and writes under that generation's {@code ver}; a container without a record (a
     * rebuild into a new one) records the file as its generation 0.
     */
    private static RulesState counted(com.azure.cosmos.CosmosAsyncContainer container, DeploymentRules.RulesFile file) {
        try {
            return new DeploymentRules(new RulesStateStore(container)).counted(file, Instant.now());
        } catch (DeploymentRules.Mismatch e) {
            throw new ReplayException(EXIT_USAGE, e.getMessage(), e);
        }
    }

    private RuleSelection selection(GradeRules rules) {
        try {
            return RuleSelection.of(rules, settings.rules());
        } catch (IllegalArgumentException e) {
            throw new ReplayException(EXIT_USAGE, e.getMessage(), e);
        }
    }

    private KafkaConsumer<byte[], byte[]> consumer(IngestSettings ingest) {
        Map<String, Object> c = new HashMap<>(ingest.kafka().consumerConfig());
        c.put(ConsumerConfig.GROUP_ID_CONFIG, settings.applicationId());
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, settings.applicationId());
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // what the live Streams consumer sees
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);         // every run starts from the plan, never from a commit
        c.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        return new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private void read(KafkaConsumer<byte[], byte[]> consumer, ReplayPlan plan, ReplayAggregator aggregator) {
        Map<TopicPartition, ReplayPlan.PartitionPlan> plans = plan.byPartition();
        Set<TopicPartition> reading = new HashSet<>();
        for (ReplayPlan.PartitionPlan p : plan.partitions()) if (p.records() > 0) reading.add(p.partition());
        consumer.assign(reading);
        for (TopicPartition tp : reading) consumer.seek(tp, plans.get(tp).start());
        progress.start("reading", plan.total());
        long done = 0, lastDone = -1, lastMove = System.nanoTime();
        while (!reading.isEmpty()) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                if (r.offset() < plans.get(new TopicPartition(r.topic(), r.partition())).end()) aggregator.accept(r);
            }
            done = 0;
            for (ReplayPlan.PartitionPlan p : plan.partitions()) {
                if (!reading.contains(p.partition())) {
                    done += p.records();
                    continue;
                }
                long position = consumer.position(p.partition(), KAFKA_TIMEOUT);
                done += Math.min(position, p.end()) - p.start();
                if (position >= p.end()) {
                    reading.remove(p.partition());
                    consumer.pause(java.util.List.of(p.partition())); // records that arrived after the plan are not read
                }
            }
            if (done != lastDone) {
                lastDone = done;
                lastMove = System.nanoTime();
            } else if (System.nanoTime() - lastMove > READ_STALL.toNanos()) {
                throw new ReplayException(EXIT_FAILED, "no progress reading " + reading + " for " + READ_STALL.toMinutes()
                        + " minutes (broker unreachable?); nothing was written");
            }
            progress.update(done);
        }
        progress.finish(done);
    }

    private WriteTotals write(ReplayAggregator aggregator, CosmosAsyncClient cosmos, com.azure.cosmos.CosmosAsyncContainer container)
            throws InterruptedException {
        IngestSettings ingest = settings.ingest();
        // With a fleet budget, a replay writes under it as one more member, beside the live sinks.
        CosmosBulkExecutor.enableFleetBudget(cosmos, container, ingest.sink(), ingest.cosmos());
        return new ReplayWriter(ingest.sink(), new CosmosBulkExecutor(container, ingest.sink()), settings.writeTimeout())
                .write(aggregator.buckets(), progress);
    }
}
