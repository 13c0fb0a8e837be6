package io.tally.tests.serde;

import static io.tally.tests.serde.SerdeFixtures.V1;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.AvroSerde;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.GenericAvroSerde;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SpecificAvroSerde;
import io.tally.schemas.serde.WireFormat;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Conversions;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Specific and generic round trips through the real registry, the Serde classes, and a real broker. */
@ExtendWith(LocalStackExtension.class)
class SerdeRoundTripIT {

    @Test
    void specificRecordsRoundTripAndUseTheTopicNameStrategy(LocalSchemaRegistry registry) {
        SchemaRegistryClient client = SerdeFixtures.client(registry);
        String topic = SerdeFixtures.freshTopic("specific");
        AvroSerde<TransactionEvent> values = AvroSerde.specific(client, TransactionEvent.class);
        AvroSerde<TransactionEvent> keys = AvroSerde.specific(client, TransactionEvent.class);
        keys.configure(Map.of(), true);

        for (TransactionEvent e : SerdeFixtures.events()) {
            byte[] bytes = values.serializer().serialize(topic, e);
            assertThat(bytes[0]).isEqualTo(WireFormat.MAGIC_BYTE);
            assertThat(values.deserializer().deserialize(topic, bytes)).isEqualTo(e);
        }
        int valueId = WireFormat.schemaId(values.serializer().serialize(topic, SerdeFixtures.events().get(0)), topic);
        int keyId = WireFormat.schemaId(keys.serializer().serialize(topic, SerdeFixtures.events().get(0)), topic);
        assertThat(client.latest(topic + "-value").id()).isEqualTo(valueId);
        assertThat(client.latest(topic + "-key").id()).isEqualTo(keyId);
    }

    @Test
    void genericRecordsRoundTripRawOrWithLogicalTypesAndMatchSpecificBytes(LocalSchemaRegistry registry) {
        SchemaRegistryClient client = SerdeFixtures.client(registry);
        String topic = SerdeFixtures.freshTopic("generic");
        TransactionEvent specific = SerdeFixtures.events().get(0);
        byte[] specificBytes = new AvroSerializer<TransactionEvent>(client).serialize(topic, specific);

        // Raw Avro values, as a generic producer without logical-type support would build them.
        GenericRecord raw = new GenericData.Record(V1);
        for (org.apache.avro.Schema.Field f : V1.getFields()) raw.put(f.name(), specific.get(f.name()));
        raw.put("eventTime", specific.getEventTime().toEpochMilli());
        raw.put("amount", new Conversions.DecimalConversion().toBytes(specific.getAmount(),
                V1.getField("amount").schema(), V1.getField("amount").schema().getLogicalType()));
        byte[] rawBytes = new AvroSerializer<GenericRecord>(client).serialize(topic, raw);
        assertThat(rawBytes).as("generic raw and specific encodings are identical").isEqualTo(specificBytes);

        GenericAvroSerde serde = new GenericAvroSerde();
        serde.configure(Map.of(AvroSerdeConfig.SCHEMA_REGISTRY_URL, registry.url()), false);
        GenericRecord back = serde.deserializer().deserialize(topic, specificBytes);
        assertThat(back.get("eventTime")).isEqualTo(specific.getEventTime().toEpochMilli());
        assertThat(back.get("amount")).isInstanceOf(ByteBuffer.class);
        assertThat(back.get("transactionId")).hasToString("tx-1");
        assertThat(serde.serializer().serialize(topic, back)).isEqualTo(specificBytes);

        GenericAvroSerde converting = new GenericAvroSerde(client);
        converting.configure(Map.of(AvroSerdeConfig.AVRO_USE_LOGICAL_TYPE_CONVERTERS, true), false);
        GenericRecord typed = converting.deserializer().deserialize(topic, specificBytes);
        assertThat(typed.get("amount")).isEqualTo(new BigDecimal("1234.5600"));
        assertThat(typed.get("eventTime")).isEqualTo(Instant.parse("2026-11-21T10:15:30.123Z"));
        assertThat(converting.serializer().serialize(topic, typed)).isEqualTo(specificBytes);

        // specific.avro.reader=true: generic bytes come back as the generated class.
        SpecificAvroSerde<TransactionEvent> reflective = new SpecificAvroSerde<>();
        reflective.configure(Map.of(AvroSerdeConfig.SCHEMA_REGISTRY_URL, registry.url()), false);
        assertThat(reflective.deserializer().deserialize(topic, rawBytes)).isEqualTo(specific);
        AvroDeserializer<Object> byFlag = new AvroDeserializer<>();
        byFlag.configure(Map.of(AvroSerdeConfig.SCHEMA_REGISTRY_URL, registry.url(), AvroSerdeConfig.SPECIFIC_AVRO_READER, "true"), false);
        assertThat(byFlag.deserialize(topic, rawBytes)).isEqualTo(specific);
    }

    @Test
    void kafkaClientsConfiguredByClassNameRoundTripThroughABroker(TestKafka kafka, LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("broker");
        kafka.createTopics(List.of(TestKafka.topic(topic, 1, Map.of())));
        Map<String, Object> producerConfig = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, AvroSerializer.class.getName(),
                AvroSerdeConfig.SCHEMA_REGISTRY_URL, registry.url());
        List<TransactionEvent> events = SerdeFixtures.events();
        try (KafkaProducer<String, TransactionEvent> producer = new KafkaProducer<>(producerConfig)) {
            for (TransactionEvent e : events) producer.send(new ProducerRecord<>(topic, e.getCustomerId(), e));
            producer.send(new ProducerRecord<>(topic, "deleted-customer", null)); // tombstone
            producer.flush();
        }
        Map<String, Object> consumerConfig = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, topic,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, AvroDeserializer.class.getName(),
                AvroSerdeConfig.SCHEMA_REGISTRY_URL, registry.url(),
                AvroSerdeConfig.SPECIFIC_AVRO_READER, "true");
        List<ConsumerRecord<String, Object>> received = new ArrayList<>();
        try (KafkaConsumer<String, Object> consumer = new KafkaConsumer<>(consumerConfig)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (received.size() < events.size() + 1 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(received::add);
            }
        }
        assertThat(received).hasSize(events.size() + 1);
        assertThat(received.subList(0, events.size())).extracting(ConsumerRecord::value).containsExactlyElementsOf(events);
        assertThat(received.get(events.size()).value()).isNull();
    }

    @Test
    void oneSerdeServesManyThreadsEvenWhenItsCachesKeepEvicting(LocalSchemaRegistry registry) throws Exception {
        // Cache bound 1 with two schemas in play: every call may evict, so cache races would show here.
        SchemaRegistryClient tiny = SchemaRegistryClient.fromConfigs(Map.of(
                AvroSerdeConfig.SCHEMA_REGISTRY_URL, registry.url(), AvroSerdeConfig.MAX_SCHEMAS_PER_SUBJECT, 1));
        String topic = SerdeFixtures.freshTopic("threads");
        AvroSerializer<org.apache.avro.generic.GenericContainer> serializer = new AvroSerializer<>(tiny);
        AvroDeserializer<TransactionEvent> deserializer = new AvroDeserializer<>(tiny, V1);
        List<TransactionEvent> events = SerdeFixtures.events();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            List<java.util.concurrent.Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        TransactionEvent e = events.get((thread + i) % events.size());
                        Object record = i % 2 == 0 ? e : SerdeFixtures.asV2(e, "d", "GOLD");
                        byte[] bytes = serializer.serialize(topic, (org.apache.avro.generic.GenericContainer) record);
                        assertThat(deserializer.deserialize(topic, bytes)).isEqualTo(e);
                    }
                    return 100;
                }));
            }
            int done = 0;
            for (var r : results) done += r.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(done).isEqualTo(800);
        } finally {
            pool.shutdownNow();
        }
    }
}
