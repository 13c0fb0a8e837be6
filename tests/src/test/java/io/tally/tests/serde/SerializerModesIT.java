package io.tally.tests.serde;

import static io.tally.tests.serde.SerdeFixtures.V1;
import static io.tally.tests.serde.SerdeFixtures.V2;
import static io.tally.tests.serde.SerdeFixtures.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDecodeException;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SchemaRegistryException;
import io.tally.schemas.serde.WireFormat;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** auto.register.schemas, use.latest.version, unknown ids and URL failover against the real registry. */
@ExtendWith(LocalStackExtension.class)
class SerializerModesIT {

    @Test
    void withoutAutoRegistrationAnUnregisteredSchemaIsAClearError(LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("noauto");
        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>();
        serializer.configure(config(registry, AvroSerdeConfig.AUTO_REGISTER_SCHEMAS, "false"), false);
        TransactionEvent event = SerdeFixtures.events().get(0);

        assertThatThrownBy(() -> serializer.serialize(topic, event))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.SUBJECT_NOT_FOUND);
                    assertThat(e.errorCode()).isEqualTo(40401);
                })
                .hasMessageContaining("subject " + topic + "-value")
                .hasMessageContaining("not registered")
                .hasMessageContaining("auto.register.schemas=false");

        // The subject exists now, but with another schema: still not registered, still clear.
        SchemaRegistryClient admin = SerdeFixtures.client(registry);
        admin.register(topic + "-value", V2);
        assertThatThrownBy(() -> serializer.serialize(topic, event))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e ->
                        assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.SCHEMA_NOT_FOUND))
                .hasMessageContaining("not registered");

        // Once registered (a deploy step), the same serializer finds the id without registering anything.
        admin.setCompatibility(topic + "-value", "NONE"); // v1 after v2 is a downgrade; this test is not about that
        int id = admin.register(topic + "-value", V1);
        byte[] bytes = serializer.serialize(topic, event);
        assertThat(WireFormat.schemaId(bytes, topic)).isEqualTo(id);
    }

    @Test
    void useLatestVersionWritesOldRecordsWithTheNewestSchema(LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("latest");
        SchemaRegistryClient admin = SerdeFixtures.client(registry);
        admin.register(topic + "-value", V1);
        int v2 = admin.register(topic + "-value", V2);

        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>();
        serializer.configure(config(registry, AvroSerdeConfig.AUTO_REGISTER_SCHEMAS, false,
                AvroSerdeConfig.USE_LATEST_VERSION, true), false);
        TransactionEvent event = SerdeFixtures.events().get(2);
        byte[] bytes = serializer.serialize(topic, event);

        assertThat(WireFormat.schemaId(bytes, topic)).isEqualTo(v2);
        GenericRecord asWritten = new AvroDeserializer<GenericRecord>(admin).deserialize(topic, bytes);
        assertThat(asWritten.getSchema()).isEqualTo(V2);
        assertThat(asWritten.get("deviceId")).isNull();
        assertThat(asWritten.get("loyaltyTier")).hasToString("NONE");
        assertThat(new AvroDeserializer<TransactionEvent>(admin, V1).deserialize(topic, bytes)).isEqualTo(event);
    }

    @Test
    void useLatestVersionOnAnEmptySubjectSaysSo(LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("latest-empty");
        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>();
        serializer.configure(config(registry, AvroSerdeConfig.AUTO_REGISTER_SCHEMAS, false,
                AvroSerdeConfig.USE_LATEST_VERSION, true), false);
        assertThatThrownBy(() -> serializer.serialize(topic, SerdeFixtures.events().get(0)))
                .isInstanceOf(SchemaRegistryException.class)
                .hasMessageContaining("use.latest.version=true but the subject has no versions yet");
    }

    @Test
    void anUnknownSchemaIdIsBadInputWithCoordinates(LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("unknown-id");
        SchemaRegistryClient client = SerdeFixtures.client(registry);
        byte[] valid = new AvroSerializer<TransactionEvent>(client).serialize(topic, SerdeFixtures.events().get(0));
        byte[] forged = Arrays.copyOf(valid, valid.length);
        ByteBuffer.wrap(forged).putInt(1, 987_654_321);

        AvroDeserializer<TransactionEvent> d = new AvroDeserializer<>(client, V1);
        assertThatThrownBy(() -> d.deserialize(topic, 5, 4242L, forged))
                .isInstanceOfSatisfying(AvroDecodeException.class, e -> {
                    assertThat(e.problem()).isEqualTo(AvroDecodeException.Problem.UNKNOWN_SCHEMA_ID);
                    assertThat(e.isBadInput()).isTrue();
                    assertThat(e.schemaId()).isEqualTo(987_654_321);
                    assertThat(e.topic()).isEqualTo(topic);
                    assertThat(e.partition()).hasValue(5);
                    assertThat(e.offset()).hasValue(4242L);
                })
                .hasMessageStartingWith("Cannot decode Avro record on " + topic + "-5@4242 (writer schema id 987654321)")
                .hasMessageContaining("no schema with id 987654321");

        // Truncated body with a valid id: corrupt, also bad input.
        byte[] truncated = Arrays.copyOf(valid, 12);
        assertThatThrownBy(() -> d.deserialize(topic, truncated))
                .isInstanceOfSatisfying(AvroDecodeException.class, e -> {
                    assertThat(e.problem()).isEqualTo(AvroDecodeException.Problem.CORRUPT_AVRO);
                    assertThat(e.isBadInput()).isTrue();
                });
    }

    @Test
    void failsOverFromADeadUrlToTheRegistry(LocalSchemaRegistry registry) throws IOException {
        int deadPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            deadPort = s.getLocalPort();
        }
        String topic = SerdeFixtures.freshTopic("failover");
        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>();
        serializer.configure(config(registry, AvroSerdeConfig.SCHEMA_REGISTRY_URL,
                "http://127.0.0.1:" + deadPort + "," + registry.url()), false);
        TransactionEvent event = SerdeFixtures.events().get(1);
        byte[] bytes = serializer.serialize(topic, event);
        assertThat(new AvroDeserializer<TransactionEvent>(SerdeFixtures.client(registry), V1).deserialize(topic, bytes))
                .isEqualTo(event);
    }

    @Test
    void recordsThatDoNotFitAreRejectedNamingTopicAndSubject(LocalSchemaRegistry registry) {
        String topic = SerdeFixtures.freshTopic("misfit");
        SchemaRegistryClient admin = SerdeFixtures.client(registry);
        admin.setCompatibility(topic + "-value", "NONE");
        admin.register(topic + "-value", V1);
        admin.register(topic + "-value", SerdeFixtures.incompatibleWithV1()); // latest needs riskScore, no default

        AvroSerializer<TransactionEvent> latest = new AvroSerializer<>();
        latest.configure(config(registry, AvroSerdeConfig.AUTO_REGISTER_SCHEMAS, false,
                AvroSerdeConfig.USE_LATEST_VERSION, true), false);
        assertThatThrownBy(() -> latest.serialize(topic, SerdeFixtures.events().get(0)))
                .isInstanceOf(org.apache.kafka.common.errors.SerializationException.class)
                .hasMessageContaining("topic " + topic + " (subject " + topic + "-value")
                .hasMessageContaining("latest schema")
                .hasMessageContaining("riskScore");

        GenericRecord incomplete = new org.apache.avro.generic.GenericData.Record(V1); // required fields left null
        assertThatThrownBy(() -> new AvroSerializer<GenericRecord>(admin).serialize(topic, incomplete))
                .isInstanceOf(org.apache.kafka.common.errors.SerializationException.class)
                .hasMessageContaining("Cannot encode io.tally.schemas.avro.TransactionEvent for topic " + topic);
    }
}
