package io.tally.tests.serde;

import static io.tally.tests.serde.SerdeFixtures.V1;
import static io.tally.tests.serde.SerdeFixtures.V2;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.RegisteredSchema;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SchemaRegistryException;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.util.Utf8;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tally's schema evolution contract against the real registry: BACKWARD compatibility accepts v2 (new
 * optional fields with defaults) and rejects a change old events could not be read with (409); v1 and v2
 * events mixed on one topic decode with the v1 generated class and with the generic reader.
 */
@ExtendWith(LocalStackExtension.class)
class SchemaEvolutionIT {

    @Test
    void backwardCompatibilityAcceptsV2AndRejectsARequiredNewField(LocalSchemaRegistry registry) {
        SchemaRegistryClient client = SerdeFixtures.client(registry);
        String subject = AvroSerdeConfig.subject(SerdeFixtures.freshTopic("evolution"), false);
        // Pin the level on the subject: an externally provided registry may have another global default.
        client.setCompatibility(subject, "BACKWARD");

        int v1 = client.register(subject, V1);
        int v2 = client.register(subject, V2);
        assertThat(v2).isNotEqualTo(v1);
        assertThat(client.register(subject, V1)).as("re-registering is idempotent").isEqualTo(v1);
        RegisteredSchema latest = client.latest(subject);
        assertThat(latest.version()).isEqualTo(2);
        assertThat(latest.id()).isEqualTo(v2);
        assertThat(latest.schema()).isEqualTo(V2);

        assertThatThrownBy(() -> client.register(subject, SerdeFixtures.incompatibleWithV1()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.status()).isEqualTo(409);
                    assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.INCOMPATIBLE);
                    assertThat(e.isRetriable()).isFalse();
                })
                .hasMessageContaining("409")
                .hasMessageContaining(subject);
    }

    @Test
    void v1AndV2EventsOnOneTopicDecodeWithTheV1ClassAndGenerically(LocalSchemaRegistry registry) {
        SchemaRegistryClient client = SerdeFixtures.client(registry);
        String topic = SerdeFixtures.freshTopic("mixed");
        AvroSerializer<GenericContainer> producer = new AvroSerializer<>(client); // auto-registers v1, then v2
        List<TransactionEvent> events = SerdeFixtures.events();
        List<byte[]> payloads = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            payloads.add(producer.serialize(topic, i % 2 == 0 ? events.get(i)
                    : SerdeFixtures.asV2(events.get(i), "dev-" + i, "GOLD")));
        }
        assertThat(ByteBuffer.wrap(payloads.get(0), 1, 4).getInt())
                .isNotEqualTo(ByteBuffer.wrap(payloads.get(1), 1, 4).getInt());

        AvroDeserializer<TransactionEvent> v1Reader = new AvroDeserializer<>(client, TransactionEvent.getClassSchema());
        AvroDeserializer<GenericRecord> generic = new AvroDeserializer<>(client);
        for (int i = 0; i < events.size(); i++) {
            assertThat(v1Reader.deserialize(topic, payloads.get(i))).as("event %d via v1 class", i).isEqualTo(events.get(i));
            GenericRecord g = generic.deserialize(topic, payloads.get(i));
            assertThat(g.get("transactionId")).hasToString(events.get(i).getTransactionId());
            if (i % 2 == 0) {
                assertThat(g.getSchema()).isEqualTo(V1);
                assertThat(g.hasField("deviceId")).isFalse();
            } else {
                assertThat(g.getSchema()).isEqualTo(V2);
                assertThat(g.get("deviceId")).isEqualTo(new Utf8("dev-" + i));
                assertThat(g.get("loyaltyTier")).isEqualTo(new Utf8("GOLD"));
            }
        }

        // A v2 reader (generic, resolving) sees v1 events with the defaults filled in.
        AvroDeserializer<GenericRecord> v2Reader = new AvroDeserializer<>(client, V2);
        GenericRecord old = v2Reader.deserialize(topic, payloads.get(0));
        assertThat(old.get("deviceId")).isNull();
        assertThat(old.get("loyaltyTier")).hasToString("NONE");
        v1Reader.configure(Map.of(), false); // configure after construction keeps the reader schema
        assertThat(v1Reader.deserialize(topic, payloads.get(1))).isEqualTo(events.get(1));
    }
}
