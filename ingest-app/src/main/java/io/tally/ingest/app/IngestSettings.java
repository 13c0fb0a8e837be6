package io.tally.ingest.app;

import io.tally.config.Config;
import io.tally.config.Setting;
import io.tally.cosmos.CosmosSettings;
import io.tally.ingest.freshness.FreshnessTarget;
import io.tally.ingest.sink.SinkSettings;
import io.tally.ingest.topology.CommitPace;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.RegistryClientSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Everything ingest-app reads, parsed once. Kafka client settings pass through with the {@code kafka.} prefix, per
 * client with {@code kafka.streams.}, {@code kafka.consumer.} and {@code kafka.producer.} ({@link KafkaClientSettings}).
 */
public record IngestSettings(Role role, KafkaClientSettings kafka, RegistryClientSettings registryClient,
                             String applicationId,
                             Path stateDir, Duration commitInterval, SinkSettings sink,
                             CosmosSettings cosmos, AggregationSettings aggregation,
                             Topics.Names topics, boolean createMissingTopics, Duration topicsTimeout) {

    public enum Role { AGGREGATE, SINK, BOTH }

    public static final Setting<String> ROLE = Setting.string("ingest.role", "both",
            "Which stages this process runs: aggregate (Kafka Streams, stages 1-6), sink (Cosmos writer, 7-10) or both.")
            .validate(v -> List.of("aggregate", "sink", "both").contains(v), "must be aggregate, sink or both");
    public static final Setting<String> BOOTSTRAP = Setting.string("kafka.bootstrap.servers", "127.0.0.1:9092",
            "Kafka bootstrap servers.");
    public static final Setting<String> REGISTRY = Setting.string("schema.registry.url", "http://127.0.0.1:8085",
            "Confluent-API schema registry URL(s), comma-separated.");
    public static final Setting<Duration> MISSING_ID_TTL = Setting.millis("schema.registry.missing-id-cache-ttl.ms", 60_000,
            "How long an input record's schema id that the registry does not know is taken as unknown without asking it again "
                    + "(its records go to the DLQ as DECODE_FAILED either way). Bounds the registry requests, one per record on "
                    + "the stream thread, that a producer writing with a wrong registry would cause. 0: ask for every record "
                    + "(Confluent's default, missing.id.cache.ttl.sec=0; for a registry replica that can lag behind the one producers "
                    + "register with).");
    public static final Setting<String> TOPIC_PREFIX = Setting.optionalString("topics.prefix", "",
            "Prefix of every topic name (transactions, transactions.dlq, bucket-updates, bucket-updates.dlq), to keep environments apart on one cluster.");
    public static final Setting<Boolean> CREATE_TOPICS = Setting.bool("topics.create-missing", true,
            "Create missing topics with their documented partitions and configs at start (misconfigured ones always stop the start).");
    public static final Setting<Duration> TOPICS_TIMEOUT = Setting.millis("topics.timeout.ms", 60_000,
            "How long topic provisioning (at start, and ./tally topics) waits for the broker to answer and "
                    + "for every partition to have a leader before it gives up.")
            .validate(d -> !d.isZero(), "must be > 0");
    public static final Setting<String> APP_ID = Setting.string("ingest.application-id", "tally-ingest",
            "Kafka Streams application id: names the consumer group, internal topics and state.");
    public static final Setting<String> STATE_DIR = Setting.string("ingest.state-dir", "/tmp/tally-streams",
            "Directory of Kafka Streams state stores. Put it on a persistent disk in production: a lost directory is rebuilt from the changelogs, which takes time.");
    public static final Setting<Duration> COMMIT_INTERVAL = Setting.millis("ingest.commit-interval.ms", 0,
            "Kafka Streams commit interval while the aggregation keeps up: bucket updates are emitted at most once per bucket "
                    + "per interval. 0 (default): a sixth of ingest.freshness-target.ms.");

    public static List<Setting<?>> all() {
        List<Setting<?>> all = new ArrayList<>(List.of(ROLE, BOOTSTRAP, REGISTRY, RegistryClientSettings.USER_INFO, MISSING_ID_TTL, TOPIC_PREFIX, CREATE_TOPICS, TOPICS_TIMEOUT, APP_ID, STATE_DIR,
                FreshnessTarget.TARGET, COMMIT_INTERVAL, FreshnessTarget.BACKLOG_COMMIT_INTERVAL));
        all.addAll(SinkSettings.ALL);
        all.addAll(AggregationSettings.ALL);
        all.addAll(CosmosSettings.ALL);
        return all;
    }

    public static IngestSettings load(String[] args, Map<String, String> env) {
        Config c = Config.load(all(), List.of(KafkaClientSettings.PREFIX), args, env);
        FreshnessTarget freshness = FreshnessTarget.from(c);
        Duration commitInterval = c.get(COMMIT_INTERVAL).isZero() ? freshness.commitInterval() : c.get(COMMIT_INTERVAL);
        CommitPace pace = CommitPace.of(commitInterval, freshness.backlogCommitInterval(), freshness.behindAfter());
        AggregationSettings aggregation = AggregationSettings.from(c);
        return new IngestSettings(Role.valueOf(c.get(ROLE).toUpperCase(java.util.Locale.ROOT)),
                KafkaClientSettings.from(c, c.get(BOOTSTRAP)),
                RegistryClientSettings.forUrls(c.get(REGISTRY), c.get(RegistryClientSettings.USER_INFO)).withMissingIdCacheTtl(c.get(MISSING_ID_TTL)),
                c.get(APP_ID), Path.of(c.get(STATE_DIR)),
                commitInterval, SinkSettings.from(c, freshness), CosmosSettings.from(c),
                aggregation.withTopology(aggregation.topology().withCommitPace(pace)),
                Topics.Names.withPrefix(c.get(TOPIC_PREFIX)), c.get(CREATE_TOPICS), c.get(TOPICS_TIMEOUT));
    }

    public String bootstrapServers() { return kafka.bootstrapServers(); }

    /**
     * Kafka Streams' own commit interval: the backlog interval when the aggregation paces its commits (it asks for one
     * every {@link #commitInterval()} while it keeps up), else {@link #commitInterval()}.
     */
    public Duration streamsCommitInterval() {
        CommitPace pace = aggregation.topology().commitPace();
        return pace.paced() ? pace.backlogInterval() : commitInterval;
    }

    public boolean runsAggregation() { return role != Role.SINK; }

    public boolean runsSink() { return role != Role.AGGREGATE; }
}
