package io.tally.ingest.topology;

import io.tally.ingest.rules.GradeRules;
import io.tally.model.BucketDocument;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.math.BigDecimal;
import java.time.Instant;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.KeyValueStore;
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
 * <p>Stage 6 keeps the Streams record cache on, deliberately: the cache merges the updates of one
 * bucket between commits, so each changed bucket is emitted at most once per commit interval, and
 * the sink downstream writes fewer, larger values. Every step that becomes a topic or a store is
 * named, so adding a step does not rename (and orphan) existing changelogs.
 */
public final class TallyTopology {
    public static final String SOURCE = "transactions-source";
    public static final String DECODE = "decode";
    public static final String DLQ_SINK = "dlq-sink";
    public static final String DEDUPE = "dedupe";
    public static final String DEDUPE_STORE = "dedupe-store";
    public static final String FAN_OUT = "fan-out";
    public static final String REPARTITION = "bucket-repartition";
    public static final String BUCKET_STORE = "bucket-store";
    public static final String SINK = "bucket-updates-sink";

    private TallyTopology() {}

    public static void build(StreamsBuilder builder, Topics.Names topics, TopologySettings settings, GradeRules rules,
                             Deserializer<TransactionEvent> events) {
        Serde<BucketDocument> compact = CompactBucketSerde.serde();
        Serde<BucketDocument> json = BucketDocumentSerde.serde();
        PartitionKeyPartitioner byPartitionKey = new PartitionKeyPartitioner();
        EventValidator validator = new EventValidator(settings.maxAmount(), settings.maxFutureSkew(), settings.lateBound());
        builder.addStateStore(Stores.windowStoreBuilder(
                Stores.persistentWindowStore(DEDUPE_STORE, settings.dedupeHorizon(), settings.dedupeHorizon(), false),
                Serdes.String(), Serdes.Long()));

        KStream<byte[], Decoded> decoded = builder
                .stream(topics.transactions(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(SOURCE))
                .process(() -> new DecodeProcessor(events, validator), Named.as(DECODE));

        decoded.filter((k, d) -> d.isRejected(), Named.as("rejected"))
                .mapValues(Decoded::raw, Named.as("original-bytes"))
                .to(topics.transactionsDlq(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(DLQ_SINK));

        decoded.filter((k, d) -> !d.isRejected(), Named.as("accepted"))
                .mapValues(Decoded::event, Named.as("event"))
                .process(() -> new DedupeProcessor(DEDUPE_STORE, settings.dedupeHorizon()), Named.as(DEDUPE), DEDUPE_STORE)
                .process(() -> new FanOutProcessor(new FanOut(rules)), Named.as(FAN_OUT)) // one per task: FanOut keeps a small cache
                .repartition(Repartitioned.<String, BucketDocument>as(REPARTITION)
                        .withKeySerde(Serdes.String()).withValueSerde(compact).withStreamPartitioner(byPartitionKey))
                .groupByKey()
                .reduce(TallyTopology::merge, Named.as("aggregate-buckets"),
                        Materialized.<String, BucketDocument, KeyValueStore<Bytes, byte[]>>as(BUCKET_STORE)
                                .withKeySerde(Serdes.String()).withValueSerde(compact))
                .toStream(Named.as("changed-buckets"))
                // Stamped once per emitted value rather than once per delta merged.
                .mapValues(d -> d.withUpdatedAt(Instant.now().toString()), Named.as("stamp-updated-at"))
                .to(topics.bucketUpdates(), Produced.with(Serdes.String(), json).withStreamPartitioner(byPartitionKey).withName(SINK));
    }

    public static AvroDeserializer<TransactionEvent> eventDeserializer(SchemaRegistryClient registry) {
        return new AvroDeserializer<>(registry, TransactionEvent.getClassSchema());
    }

    /** Stage 5: adds one delta to a bucket's absolute value; {@code ver} counts the deltas applied. */
    public static BucketDocument merge(BucketDocument agg, BucketDocument d) {
        return new BucketDocument(agg.pk(), agg.id(), agg.grade(), agg.unit(), agg.bucket(),
                add(agg.sum(), d.sum()), agg.count() + d.count(), min(agg.min(), d.min()), max(agg.max(), d.max()),
                agg.ver() + 1, agg.ttl(), null);
    }

    private static BigDecimal add(BigDecimal a, BigDecimal b) {
        return a == null ? b : b == null ? a : a.add(b);
    }

    private static BigDecimal min(BigDecimal a, BigDecimal b) {
        return a == null ? b : b == null ? a : a.min(b);
    }

    private static BigDecimal max(BigDecimal a, BigDecimal b) {
        return a == null ? b : b == null ? a : a.max(b);
    }
}
