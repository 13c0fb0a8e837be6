package io.tally.tests.serde;

import static io.tally.tests.serde.SerdeFixtures.V1;
import static io.tally.tests.serde.SerdeFixtures.V2;
import static io.tally.tests.serde.SerdeFixtures.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SchemaRegistryException;
import io.tally.schemas.serde.WireFormat;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * key/value.subject.name.strategy against the real registry: the subject each strategy files a schema under,
 * and that readers do not care (the wire format carries the id, so {@link AvroDeserializer} decodes by id
 * whatever the subject).
 */
@ExtendWith(LocalStackExtension.class)
class SubjectNameStrategyIT {
    private static final String EVENT = V1.getFullName();

    @Test
    void recordNameStrategySharesOneSubjectAcrossTopics(LocalSchemaRegistry registry) {
        String orders = SerdeFixtures.freshTopic("record-name-a");
        String refunds = SerdeFixtures.freshTopic("record-name-b");
        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>();
        serializer.configure(config(registry, AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY,
                "io.confluent.kafka.serializers.subject.RecordNameStrategy"), false);
        TransactionEvent event = SerdeFixtures.events().get(0);
        byte[] toOrders = serializer.serialize(orders, event);
        byte[] toRefunds = serializer.serialize(refunds, event);

        SchemaRegistryClient admin = SerdeFixtures.client(registry);
        int id = WireFormat.schemaId(toOrders, orders);
        assertThat(WireFormat.schemaId(toRefunds, refunds)).isEqualTo(id);
        assertThat(admin.lookup(EVENT, V1)).isEqualTo(id);
        assertNoSubject(admin, orders + "-value");
        assertNoSubject(admin, refunds + "-value");
        AvroDeserializer<TransactionEvent> reader = new AvroDeserializer<>(admin, V1);
        assertThat(reader.deserialize(orders, toOrders)).isEqualTo(event);
        assertThat(reader.deserialize(refunds, toRefunds)).isEqualTo(event);
    }

    @Test
    void topicRecordNameStrategyGivesEachRecordTypeOfATopicItsOwnSubject(LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("topic-record-name");
        Map<String, Object> settings = config(registry, AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "topic-record-name");
        AvroSerializer<TransactionEvent> events = new AvroSerializer<>();
        events.configure(settings, false);
        AvroSerializer<GenericRecord> probes = new AvroSerializer<>();
        probes.configure(settings, false);
        TransactionEvent event = SerdeFixtures.events().get(1);
        GenericRecord probe = probe("p-1");

        byte[] eventBytes = events.serialize(topic, event);
        byte[] probeBytes = probes.serialize(topic, probe);

        SchemaRegistryClient admin = SerdeFixtures.client(registry);
        assertThat(admin.latest(topic + "-" + EVENT).id()).isEqualTo(WireFormat.schemaId(eventBytes, topic));
        assertThat(admin.latest(topic + "-" + probe.getSchema().getFullName()).id())
                .isEqualTo(WireFormat.schemaId(probeBytes, topic));
        assertNoSubject(admin, topic + "-value");
        AvroDeserializer<GenericRecord> reader = new AvroDeserializer<>(admin);
        assertThat(reader.deserialize(topic, eventBytes).get("transactionId")).hasToString(event.getTransactionId());
        assertThat(reader.deserialize(topic, probeBytes)).isEqualTo(probe);
    }

    @Test
    void keysFollowTheKeyStrategy(LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("key-strategy");
        AvroSerializer<GenericRecord> keys = new AvroSerializer<>();
        keys.configure(config(registry, AvroSerdeConfig.KEY_SUBJECT_NAME_STRATEGY, "RecordNameStrategy",
                AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "topic-record-name"), true);
        GenericRecord key = probe("k-1");
        byte[] bytes = keys.serialize(topic, key);

        SchemaRegistryClient admin = SerdeFixtures.client(registry);
        assertThat(admin.latest(key.getSchema().getFullName()).id()).isEqualTo(WireFormat.schemaId(bytes, topic));
        assertNoSubject(admin, topic + "-key");
        assertThat(new AvroDeserializer<GenericRecord>(admin).deserialize(topic, bytes)).isEqualTo(key);
    }

    @Test
    void useLatestVersionReadsTheStrategysSubject(LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("topic-record-latest");
        SchemaRegistryClient admin = SerdeFixtures.client(registry);
        admin.register(topic + "-" + EVENT, V1);
        int v2 = admin.register(topic + "-" + EVENT, V2);

        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>();
        serializer.configure(config(registry, AvroSerdeConfig.AUTO_REGISTER_SCHEMAS, false,
                AvroSerdeConfig.USE_LATEST_VERSION, true,
                AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"),
                false);
        TransactionEvent event = SerdeFixtures.events().get(2);
        byte[] bytes = serializer.serialize(topic, event);

        assertThat(WireFormat.schemaId(bytes, topic)).isEqualTo(v2);
        assertThat(new AvroDeserializer<TransactionEvent>(admin, V1).deserialize(topic, bytes)).isEqualTo(event);
    }

    /** A record type no other test or run registers, so its record-name subject starts empty. */
    private static GenericRecord probe(String id) {
        String namespace = "io.tally.tests.probe" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        Schema schema = Schema.createRecord("Probe", null, namespace, false,
                List.of(new Schema.Field("id", Schema.create(Schema.Type.STRING))));
        GenericRecord r = new GenericData.Record(schema);
        r.put("id", new org.apache.avro.util.Utf8(id));
        return r;
    }

    private static void assertNoSubject(SchemaRegistryClient admin, String subject) {
        assertThatThrownBy(() -> admin.latest(subject))
                .isInstanceOfSatisfying(SchemaRegistryException.class,
                        e -> assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.SUBJECT_NOT_FOUND));
    }
}
