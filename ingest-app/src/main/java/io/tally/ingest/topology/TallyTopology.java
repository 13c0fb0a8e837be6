package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import io.tally.model.BucketKey;
import io.tally.model.TimeUnit;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Stages 1-6 of the data flow: decode (failures to {@code transactions.dlq}), key into buckets,
 * repartition by bucket, aggregate into absolute values, emit changed buckets to {@code bucket-updates}.
 *
 * <p>One built-in grade for now: spend per customer per hour. Every step that becomes a topic or a
 * store is named, so adding a step does not rename (and orphan) existing changelogs.
 */
public final class TallyTopology {
    public static final String SOURCE = "transactions-source";
    public static final String REPARTITION = "bucket-repartition";
    public static final String BUCKET_STORE = "bucket-store";
    public static final String SINK = "bucket-updates-sink";
    public static final String DECODE = "decode";
    public static final String DLQ_SINK = "dlq-sink";

    static final String GRADE = "spend";
    static final TimeUnit UNIT = TimeUnit.HOUR;
    static final Duration RETENTION = Duration.ofDays(90);

    private TallyTopology() {}

    public static void build(StreamsBuilder builder, Deserializer<TransactionEvent> events) {
        Serde<BucketDocument> docs = BucketDocumentSerde.serde();
        KStream<byte[], Decoded> decoded = builder
                .stream(Topics.TRANSACTIONS, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(SOURCE))
                .process(() -> new DecodeProcessor(events), Named.as(DECODE));
        decoded.filter((k, d) -> d.isRejected(), Named.as("rejected"))
                .mapValues(Decoded::raw, Named.as("original-bytes"))
                .to(Topics.TRANSACTIONS_DLQ, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(DLQ_SINK));
        decoded.filter((k, d) -> !d.isRejected(), Named.as("accepted"))
                .mapValues(Decoded::event, Named.as("event"))
                .map((k, ev) -> {
                    BucketKey key = new BucketKey(ev.getDomain(), ev.getCustomerId(), GRADE, UNIT,
                            UNIT.bucketIndex(ev.getEventTime()));
                    return KeyValue.pair(key.updateKey(), delta(key, ev.getAmount()));
                }, Named.as("key-by-bucket"))
                .groupByKey(Grouped.with(REPARTITION, Serdes.String(), docs))
                .reduce(TallyTopology::merge, Named.as("aggregate-buckets"),
                        Materialized.<String, BucketDocument, KeyValueStore<Bytes, byte[]>>as(BUCKET_STORE)
                                .withKeySerde(Serdes.String()).withValueSerde(docs))
                .toStream(Named.as("changed-buckets"))
                .to(Topics.BUCKET_UPDATES, Produced.with(Serdes.String(), docs).withName(SINK));
    }

    public static AvroDeserializer<TransactionEvent> eventDeserializer(io.tally.schemas.serde.SchemaRegistryClient registry) {
        return new AvroDeserializer<>(registry, TransactionEvent.getClassSchema());
    }

    static BucketDocument delta(BucketKey key, BigDecimal amount) {
        return new BucketDocument(key.pk(), key.id(), key.grade(), key.unit().code(),
                key.unit().bucketStart(key.bucketIndex()).toString(), amount, 1, amount, amount, 1,
                (int) RETENTION.toSeconds(), null);
    }

    static BucketDocument merge(BucketDocument agg, BucketDocument d) {
        return new BucketDocument(agg.pk(), agg.id(), agg.grade(), agg.unit(), agg.bucket(),
                agg.sum().add(d.sum()), agg.count() + d.count(), agg.min().min(d.min()), agg.max().max(d.max()),
                agg.ver() + 1, agg.ttl(), Instant.now().toString());
    }
}
