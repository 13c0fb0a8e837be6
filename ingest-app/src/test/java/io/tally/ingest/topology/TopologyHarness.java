package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketLayout;
import io.tally.model.GradeId;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.ingest.source.SourceTopics;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.WireFormat;
import io.tally.schemas.avro.TransactionEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Stages 1-6 as built for production ({@link TallyTopology#build}) in a TopologyTestDriver, whose wall clock starts
 * at {@code now}. The driver commits after every input record.
 */
public final class TopologyHarness implements AutoCloseable {
    /** The schema id {@link #avro} writes; the registry is the serde's concern, tested elsewhere. */
    public static final int SCHEMA_ID = 1;

    /**
     * Confluent wire format of schema id {@link #SCHEMA_ID}, decoded as a generic record of TransactionEvent's schema,
     * as the production deserializer decodes with the writer schema the registry gives.
     */
    public static final Deserializer<Object> PLAIN_AVRO = (topic, bytes) -> {
        try {
            WireFormat.schemaId(bytes, topic);
            return new GenericDatumReader<>(TransactionEvent.getClassSchema()).read(null,
                    DecoderFactory.get().binaryDecoder(bytes, WireFormat.HEADER_SIZE, bytes.length - WireFormat.HEADER_SIZE, null));
        } catch (IOException | RuntimeException e) {
            throw new org.apache.kafka.common.errors.SerializationException("not a TransactionEvent: " + e, e);
        }
    };

    /** The shipped sources: TransactionEvent on the topic transactions. */
    public static final SourceTopics SOURCES = SourceTopics.shipped(Topics.Names.DEFAULT);

    public final TopologyTestDriver driver;
    public final TestInputTopic<String, byte[]> input;
    public final TestOutputTopic<String, EntityBucket> updates;
    public final TestOutputTopic<byte[], byte[]> dlq;

    public TopologyHarness(GradeRules rules, TopologySettings settings, Deserializer<?> events, Instant now) {
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, Topics.Names.DEFAULT, settings, rules, SOURCES, events);
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "topology-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        driver = new TopologyTestDriver(builder.build(), p, now);
        input = driver.createInputTopic(Topics.TRANSACTIONS, Serdes.String().serializer(), Serdes.ByteArray().serializer());
        updates = driver.createOutputTopic(Topics.BUCKET_UPDATES, Serdes.String().deserializer(), EntityBucketSerde.serde().deserializer());
        dlq = driver.createOutputTopic(Topics.TRANSACTIONS_DLQ, Serdes.ByteArray().deserializer(), Serdes.ByteArray().deserializer());
    }

    public KeyValueStore<String, EntityBucket> store() {
        return driver.getKeyValueStore(TallyTopology.BUCKET_STORE);
    }

    /** Every document in the bucket store, by key {@code pk|id}. */
    public Map<String, EntityBucket> stored() {
        Map<String, EntityBucket> out = new LinkedHashMap<>();
        try (KeyValueIterator<String, EntityBucket> it = store().all()) {
            it.forEachRemaining(kv -> out.put(kv.key, kv.value));
        }
        return out;
    }

    /**
     * The bucket of {@code grade} ({@code rule} or {@code rule:qualifier}) in the store as the read API shows it, found
     * as a reader finds it: in the main document, or in the spill page the main document points to. Null when none.
     */
    public BucketDocument grade(String pk, String grade, TimeUnit unit, long bucketIndex) {
        EntityBucket main = store().get(BucketKey.updateKey(pk, EntityBucketId.main(unit, bucketIndex)));
        if (main == null) return null;
        GradeId id = GradeId.parse(grade);
        String qualifier = id.qualifier().orElse(null);
        int pages = main.spilledPages(id.rule());
        EntityBucket holder = qualifier == null || pages == 0 ? main : store().get(BucketKey.updateKey(pk,
                EntityBucketId.page(unit, bucketIndex, id.rule(), EntityBucketLayout.pageOf(qualifier, pages))));
        return holder == null ? null : holder.grade(id.rule(), qualifier).orElse(null);
    }

    @Override
    public void close() {
        driver.close();
    }

    public static byte[] avro(TransactionEvent e) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(WireFormat.header(SCHEMA_ID));
            var enc = EncoderFactory.get().binaryEncoder(out, null);
            new SpecificDatumWriter<>(TransactionEvent.class).write(e, enc);
            enc.flush();
            return out.toByteArray();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
