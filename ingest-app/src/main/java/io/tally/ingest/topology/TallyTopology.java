package io.tally.ingest.topology;

import io.tally.ingest.rules.GradeRules;
import io.tally.model.BucketDocument;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.time.Duration;
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
 *   <li>decode and validate; failures to {@code transactions.dlq} with reason and source coordinates</li>
 *   <li>dedupe by transaction id within a horizon</li>
 *   <li>fan out by the grade rules into one delta per (entity, grade, unit, bucket)</li>
 *   <li>repartition by Cosmos logical partition key</li>
 *   <li>aggregate into absolute bucket values, {@code ver} growing with every change</li>
 *   <li>emit changed buckets to {@code bucket-updates} (key {@code pk|id})</li>
 * </ol>
 *
 * <p>An event crosses the broker once per entity it touches (stage 4 carries all of that entity's deltas
 * in one record), and stage 6 emits from the record cache: each changed bucket at most once per commit
 * interval, with its newest value, so the sink downstream writes fewer, larger values. Every step that
 * becomes a topic or a store is named, so adding a step does not rename (and orphan) existing changelogs.
 */
public final class TallyTopology {
    public static final String SOURCE = "transactions-source";
    public static final String DECODE = "decode";
    public static final String DLQ_SINK = "dlq-sink";
    public static final String DEDUPE = "dedupe";
    /** Sightings filed by cell ({@link DedupeRule}); renamed from {@code dedupe-store}, whose range layout it replaced. */
    public static final String DEDUPE_STORE = "dedupe-cells";
    public static final String FAN_OUT = "fan-out";
    /** One record per (event, pk) ({@link EntityDeltas}); replaced {@code bucket-repartition}, one record per delta. */
    public static final String REPARTITION = "entity-deltas";
    public static final String AGGREGATE = "aggregate-buckets";
    public static final String BUCKET_STORE = "bucket-store";
    public static final String SINK = "bucket-updates-sink";

    private TallyTopology() {}

    public static void build(StreamsBuilder builder, Topics.Names topics, TopologySettings settings, GradeRules rules,
                             Deserializer<TransactionEvent> events) {
        PartitionKeyPartitioner byPartitionKey = new PartitionKeyPartitioner();
        EventIntake intake = new EventIntake(events, new EventValidator(settings.maxAmount(), settings.maxFutureSkew(), settings.lateBound()));
        DedupeRule dedupe = new DedupeRule(settings.dedupeHorizon());
        builder.addStateStore(Stores.windowStoreBuilder(
                Stores.persistentWindowStore(DEDUPE_STORE, dedupe.retention(), Duration.ofMillis(dedupe.cellWidthMs()), false),
                Serdes.String(), Serdes.Long()));
        // The same store type the DSL's reduce built under this name before, so existing state and its changelog carry over.
        builder.addStateStore(Stores.timestampedKeyValueStoreBuilder(Stores.persistentTimestampedKeyValueStore(BUCKET_STORE),
                Serdes.String(), CompactBucketSerde.serde()).withCachingEnabled());

        KStream<byte[], Decoded> decoded = builder
                .stream(topics.transactions(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(SOURCE))
                .process(() -> new DecodeProcessor(intake), Named.as(DECODE));

        decoded.filter((k, d) -> d.isRejected(), Named.as("rejected"))
                .mapValues(Decoded::raw, Named.as("original-bytes"))
                .to(topics.transactionsDlq(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(DLQ_SINK));

        decoded.filter((k, d) -> !d.isRejected(), Named.as("accepted"))
                .mapValues(Decoded::event, Named.as("event"))
                .process(() -> new DedupeProcessor(DEDUPE_STORE, dedupe), Named.as(DEDUPE), DEDUPE_STORE)
                .process(() -> new FanOutProcessor(new FanOut(rules)), Named.as(FAN_OUT))
                .repartition(Repartitioned.<String, EntityDeltas>as(REPARTITION)
                        .withKeySerde(Serdes.String()).withValueSerde(EntityDeltasSerde.serde()).withStreamPartitioner(byPartitionKey.forDeltas()))
                .process(() -> new BucketAggregator(BUCKET_STORE), Named.as(AGGREGATE), BUCKET_STORE)
                .to(topics.bucketUpdates(), Produced.with(Serdes.String(), BucketDocumentSerde.serde())
                        .withStreamPartitioner(byPartitionKey).withName(SINK));
    }

    public static AvroDeserializer<TransactionEvent> eventDeserializer(SchemaRegistryClient registry) {
        return new AvroDeserializer<>(registry, TransactionEvent.getClassSchema());
    }
}
