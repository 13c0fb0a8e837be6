package io.tally.ingest.topology;

import io.tally.ingest.source.SourceReader;
import io.tally.ingest.source.SourceTopics;
import io.tally.rules.GradeRules;
import io.tally.rules.source.RuleFields;
import io.tally.rules.source.SourceMapping;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.Stores;

/**
 * Stages 1-6 of the data flow:
 * <ol>
 *   <li>read every source's topics, decode with each record's writer schema, read the values its source maps and
 *       validate; failures to {@code transactions.dlq} with reason and source coordinates</li>
 *   <li>dedupe by transaction id within a horizon</li>
 *   <li>fan out by the grade rules into deltas per (entity, grade, unit, bucket), combined per bucket until the next commit</li>
 *   <li>repartition by Cosmos logical partition key</li>
 *   <li>aggregate into entity buckets (every grade of an entity, unit and bucket in one document), {@code ver} growing
 *       with every change</li>
 *   <li>emit changed entity buckets to {@code bucket-updates} (key {@code pk|id})</li>
 * </ol>
 *
 * <p>An entity crosses the broker at most once per commit interval and task (stage 4 carries all of that
 * entity's combined deltas in one record), and stage 6 emits each changed bucket at most once per commit
 * interval, with its newest value, so the sink downstream writes fewer, larger values. Every step that
 * becomes a topic or a store is named, so adding a step does not rename (and orphan) existing changelogs.
 */
public final class TallyTopology {
    /** The source node of the first source; another source's node is named after it ({@link #sourceNode}). */
    public static final String SOURCE = "transactions-source";
    public static final String DECODE = "decode";
    public static final String DLQ_SINK = "dlq-sink";
    public static final String DEDUPE = "dedupe";
    /** Sightings filed by cell ({@link DedupeRule}); renamed from {@code dedupe-store}, whose range layout it replaced. */
    public static final String DEDUPE_STORE = "dedupe-cells";
    public static final String FAN_OUT = "fan-out";
    /** Hold nothing: tell stages 3 and 5 that a commit begins ({@link CommitHook}), so they forward what they combined. */
    public static final String FAN_OUT_COMMIT_HOOK = "fan-out-commit-hook";
    public static final String AGGREGATE_COMMIT_HOOK = "aggregate-commit-hook";
    /** One record per (event, pk) ({@link EntityDeltas}); replaced {@code bucket-repartition}, one record per delta. */
    public static final String REPARTITION = "entity-deltas";
    public static final String AGGREGATE = "aggregate-buckets";
    /** Entity bucket documents by {@code pk|id}; replaced {@code bucket-store}, one document per grade bucket. */
    public static final String BUCKET_STORE = "entity-bucket-store";
    public static final String SINK = "bucket-updates-sink";

    private TallyTopology() {}

    /** The topic Kafka Streams names after {@link #REPARTITION} for stage 4, where stage 3's commits become visible. */
    public static String repartitionTopic(String applicationId) {
        return applicationId + "-" + REPARTITION + "-repartition";
    }

    /**
     * The topology over {@code sources}: one source node per source (a topic list or a pattern), merged before stage 1,
     * so every source shares the dedupe store (keys are scoped by source), the fan-out and everything after it.
     */
    public static void build(StreamsBuilder builder, Topics.Names topics, TopologySettings settings, GradeRules rules,
                             SourceTopics sources, Deserializer<?> events) {
        build(builder, topics, settings, rules, CountedGrades.fromStart(rules), sources, events);
    }

    /**
     * As above, counting the grades of {@code counted}'s generation, each from its seam on, and moving every document
     * written under an older generation to it as stage 5 first changes it ({@link EntityBucketMath#rebase}).
     */
    public static void build(StreamsBuilder builder, Topics.Names topics, TopologySettings settings, GradeRules rules,
                             CountedGrades counted, SourceTopics sources, Deserializer<?> events) {
        RuleFields fields = RuleFields.of(rules);
        PartitionKeyPartitioner byPartitionKey = new PartitionKeyPartitioner();
        EventIntake intake = intake(settings, fields, sources, events);
        DedupeRule dedupe = dedupeAndFanOutStores(builder, settings);
        builder.addStateStore(CommitHook.builder(AGGREGATE_COMMIT_HOOK));
        // No record cache: stage 5 keeps the documents changed within a commit interval itself, as objects.
        builder.addStateStore(Stores.timestampedKeyValueStoreBuilder(Stores.persistentTimestampedKeyValueStore(BUCKET_STORE),
                Serdes.String(), EntityBucketSerde.serde()).withCachingDisabled());

        EntityBucketMath.RuleTtls ttls = name -> rules.rule(name).map(io.tally.rules.GradeRule::ttlSeconds).orElse(-1);
        KStream<byte[], Decoded> decoded = input(builder, sources)
                .process(() -> new DecodeProcessor(intake), Named.as(DECODE));

        decoded.filter((k, d) -> d.isRejected(), Named.as("rejected"))
                .mapValues(Decoded::raw, Named.as("original-bytes"))
                .to(topics.transactionsDlq(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(DLQ_SINK));

        decoded.filter((k, d) -> !d.isRejected(), Named.as("accepted"))
                .mapValues(Decoded::event, Named.as("event"))
                .process(() -> new DedupeProcessor(DEDUPE_STORE, dedupe), Named.as(DEDUPE), DEDUPE_STORE)
                .process(() -> new FanOutProcessor(new FanOut(rules, fields, counted, CountedGrades.Side.LIVE), FAN_OUT_COMMIT_HOOK, settings.commitPace()), Named.as(FAN_OUT), FAN_OUT_COMMIT_HOOK)
                .repartition(Repartitioned.<String, EntityDeltas>as(REPARTITION)
                        .withKeySerde(Serdes.String()).withValueSerde(EntityDeltasSerde.serde()).withStreamPartitioner(byPartitionKey.forDeltas()))
                .process(() -> new BucketAggregator(BUCKET_STORE, AGGREGATE_COMMIT_HOOK, ttls, counted, settings.commitPace()), Named.as(AGGREGATE), BUCKET_STORE, AGGREGATE_COMMIT_HOOK)
                .to(topics.bucketUpdates(), Produced.with(Serdes.String(), EntityBucketSerde.serde())
                        .withStreamPartitioner(byPartitionKey).withName(SINK));
    }

    /** The backfill's node that keeps only records before the end it reads to ({@link HistoryBound}). */
    public static final String HISTORY_BOUND = "history-bound";

    /**
     * The backfill of {@code counted}'s pending grades: stages 1-3 of the live topology over every source's records
     * before {@code end} (the input offsets it reads to), with the same checks and a dedupe of its own over the same
     * records, counting only the history side of each pending grade's seam ({@link CountedGrades.Side#HISTORY}). Its
     * deltas go where the live stage 3 writes its own, the live application's stage-5 input topic, partitioned by
     * {@code pk} the same way: stage 5 stays the one writer of every document, applies them to its store (adding to
     * what the live side counted, never replacing it) and emits the documents to the sink like any other change. Both
     * applications are exactly-once, so a killed backfill resumes without counting an event twice. Rejected records
     * are dropped: the live run sent them to the DLQ already.
     */
    public static void buildHistory(StreamsBuilder builder, String liveApplicationId, TopologySettings settings, GradeRules rules,
                                    CountedGrades counted, SourceTopics sources, Deserializer<?> events, HistoryBound.End end) {
        RuleFields fields = RuleFields.of(rules);
        EventIntake intake = intake(settings, fields, sources, events);
        DedupeRule dedupe = dedupeAndFanOutStores(builder, settings);
        PartitionKeyPartitioner byPartitionKey = new PartitionKeyPartitioner();
        input(builder, sources)
                .process(() -> new HistoryBound(end), Named.as(HISTORY_BOUND))
                .process(() -> new DecodeProcessor(intake), Named.as(DECODE))
                .filter((k, d) -> !d.isRejected(), Named.as("accepted"))
                .mapValues(Decoded::event, Named.as("event"))
                .process(() -> new DedupeProcessor(DEDUPE_STORE, dedupe), Named.as(DEDUPE), DEDUPE_STORE)
                .process(() -> new FanOutProcessor(new FanOut(rules, fields, counted, CountedGrades.Side.HISTORY), FAN_OUT_COMMIT_HOOK,
                                // all history: nobody waits on each second of it, Kafka Streams' (long) interval alone
                                CommitPace.NONE),
                        Named.as(FAN_OUT), FAN_OUT_COMMIT_HOOK)
                .peek((pk, d) -> end.sent(d.deltas().size()), Named.as("count-history"))
                .to(repartitionTopic(liveApplicationId), Produced.with(Serdes.String(), EntityDeltasSerde.serde())
                        .withStreamPartitioner(byPartitionKey.forDeltas()).withName("history-to-stage-5"));
    }

    /** Stage 1's decoding and checks, the same for live and backfill. */
    private static EventIntake intake(TopologySettings settings, RuleFields fields, SourceTopics sources, Deserializer<?> events) {
        return new EventIntake(new SourceReader(sources, fields, events), EventValidator.of(settings, fields, sources.sources()));
    }

    /** The stores of stages 2 and 3 (the dedupe's sightings, the fan-out's commit hook); the dedupe rule they serve. */
    private static DedupeRule dedupeAndFanOutStores(StreamsBuilder builder, TopologySettings settings) {
        DedupeRule dedupe = new DedupeRule(settings.dedupeHorizon());
        builder.addStateStore(Stores.windowStoreBuilder(
                Stores.persistentWindowStore(DEDUPE_STORE, dedupe.retention(), Duration.ofMillis(dedupe.cellWidthMs()), false),
                Serdes.String(), Serdes.Long()));
        builder.addStateStore(CommitHook.builder(FAN_OUT_COMMIT_HOOK));
        return dedupe;
    }

    /** Records of any source, decoded with the writer schema of their id, as generic records. */
    public static AvroDeserializer<Object> eventDeserializer(SchemaRegistryClient registry) {
        return new AvroDeserializer<>(registry);
    }

    /** Every source's topics as one stream of raw records. */
    private static KStream<byte[], byte[]> input(StreamsBuilder builder, SourceTopics sources) {
        List<KStream<byte[], byte[]>> streams = new ArrayList<>();
        List<SourceMapping> all = sources.sources().sources();
        for (int i = 0; i < all.size(); i++) {
            SourceMapping s = all.get(i);
            Consumed<byte[], byte[]> consumed = Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(sourceNode(i, s));
            streams.add(sources.pattern(s).map(p -> builder.stream(p, consumed)).orElseGet(() -> builder.stream(sources.named(s), consumed)));
        }
        KStream<byte[], byte[]> merged = streams.get(0);
        for (int i = 1; i < streams.size(); i++) merged = merged.merge(streams.get(i), Named.as("merge-" + sourceNode(i, all.get(i))));
        return merged;
    }

    /** The first source keeps the node name it always had, so a one-source topology describes as before. */
    static String sourceNode(int index, SourceMapping s) {
        return index == 0 ? SOURCE : "source-" + s.name();
    }
}
