package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.TransactionEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The topology as built for production, fed plain Avro bytes (the registry is not this test's concern). */
class TallyTopologyTest {
    private TopologyTestDriver driver;
    private TestInputTopic<String, byte[]> input;

    @BeforeEach
    void setUp() {
        StreamsBuilder builder = new StreamsBuilder();
        Deserializer<TransactionEvent> plainAvro = (topic, bytes) -> {
            try {
                return new SpecificDatumReader<>(TransactionEvent.class).read(null, DecoderFactory.get().binaryDecoder(bytes, null));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
        TallyTopology.build(builder, plainAvro);
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "topology-test");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0); // see every update, not the cached merge
        driver = new TopologyTestDriver(builder.build(), p);
        input = driver.createInputTopic(Topics.TRANSACTIONS, Serdes.String().serializer(), Serdes.ByteArray().serializer());
    }

    @AfterEach
    void tearDown() {
        driver.close();
    }

    @Test
    void sumsCountsAndExtremesPerCustomerHour() {
        Instant t = Instant.parse("2024-05-01T10:15:00Z");
        input.pipeInput("c-1", avro(event("tx-1", "c-1", t, "10.50")));
        input.pipeInput("c-1", avro(event("tx-2", "c-1", t.plusSeconds(60), "2.25")));
        input.pipeInput("c-1", avro(event("tx-3", "c-1", Instant.parse("2024-05-01T11:00:00Z"), "7.00"))); // next hour
        input.pipeInput("c-2", avro(event("tx-4", "c-2", t, "1.00")));

        KeyValueStore<String, BucketDocument> store = driver.getKeyValueStore(TallyTopology.BUCKET_STORE);
        long hour = TimeUnit.HOUR.bucketIndex(t);
        BucketDocument b = store.get("shop|c-1|spend|hour|" + hour);
        assertThat(b.sum()).isEqualByComparingTo("12.75");
        assertThat(b.count()).isEqualTo(2);
        assertThat(b.min()).isEqualByComparingTo("2.25");
        assertThat(b.max()).isEqualByComparingTo("10.50");
        assertThat(b.ver()).isEqualTo(2);
        assertThat(b.bucket()).isEqualTo("2024-05-01T10:00:00Z");
        assertThat(store.get("shop|c-1|spend|hour|" + (hour + 1)).sum()).isEqualByComparingTo("7.00");
        assertThat(store.get("shop|c-2|spend|hour|" + hour).count()).isEqualTo(1);

        Map<String, BucketDocument> emitted = driver.createOutputTopic(Topics.BUCKET_UPDATES, Serdes.String().deserializer(),
                BucketDocumentSerde.serde().deserializer()).readKeyValuesToMap();
        assertThat(emitted).hasSize(3);
        assertThat(emitted.get("shop|c-1|spend|hour|" + hour)).isEqualTo(b);
    }

    @Test
    void undecodableAndEmptyRecordsGoToTheDlqWithTheirCoordinatesAndTheStreamGoesOn() {
        Instant t = Instant.parse("2024-05-01T10:15:00Z");
        byte[] garbage = "{not avro".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        input.pipeInput("c-1", garbage);
        input.pipeInput("c-1", new byte[0]);
        input.pipeInput("c-1", avro(event("tx-1", "c-1", t, "10.50")));

        var out = driver.createOutputTopic(Topics.TRANSACTIONS_DLQ, Serdes.ByteArray().deserializer(), Serdes.ByteArray().deserializer());
        var rejected = out.readRecordsToList();
        assertThat(rejected).hasSize(2);
        assertThat(rejected.get(0).value()).isEqualTo(garbage);
        assertThat(header(rejected.get(0), DeadLetters.REASON)).isEqualTo("DECODE_FAILED");
        assertThat(header(rejected.get(0), DeadLetters.MESSAGE)).isNotBlank();
        assertThat(header(rejected.get(0), DeadLetters.SOURCE_TOPIC)).isEqualTo(Topics.TRANSACTIONS);
        assertThat(header(rejected.get(0), DeadLetters.SOURCE_PARTITION)).isEqualTo("0");
        assertThat(header(rejected.get(0), DeadLetters.SOURCE_OFFSET)).isEqualTo("0");
        assertThat(header(rejected.get(0), DeadLetters.TIME)).isNotBlank();
        assertThat(header(rejected.get(1), DeadLetters.REASON)).isEqualTo("EMPTY_VALUE");
        assertThat(header(rejected.get(1), DeadLetters.SOURCE_OFFSET)).isEqualTo("1");

        KeyValueStore<String, BucketDocument> store = driver.getKeyValueStore(TallyTopology.BUCKET_STORE);
        assertThat(store.get("shop|c-1|spend|hour|" + TimeUnit.HOUR.bucketIndex(t)).count()).isEqualTo(1);
    }

    private static String header(org.apache.kafka.streams.test.TestRecord<byte[], byte[]> r, String key) {
        return new String(r.headers().lastHeader(key).value(), java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void everyStepThatBecomesATopicOrStoreIsNamed() {
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, (topic, bytes) -> null);
        String described = builder.build().describe().toString();
        assertThat(described).contains(TallyTopology.SOURCE, "(topic: " + TallyTopology.REPARTITION + ")",
                TallyTopology.BUCKET_STORE, TallyTopology.SINK, TallyTopology.DLQ_SINK).doesNotContain("KSTREAM-");
    }

    static TransactionEvent event(String tx, String customer, Instant time, String amount) {
        return TransactionEvent.newBuilder().setTransactionId(tx).setEventTime(time).setDomain("shop")
                .setCustomerId(customer).setSku("sku-1").setMerchant("m-1").setChannel("WEB")
                .setAmount(new BigDecimal(amount).setScale(4)).setCurrency("USD").setStatus("APPROVED").build();
    }

    static byte[] avro(TransactionEvent e) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            var enc = EncoderFactory.get().binaryEncoder(out, null);
            new SpecificDatumWriter<>(TransactionEvent.class).write(e, enc);
            enc.flush();
            return out.toByteArray();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
