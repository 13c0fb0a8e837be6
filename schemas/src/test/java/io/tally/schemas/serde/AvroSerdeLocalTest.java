package io.tally.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.avro.TransactionEvent;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/** What the serde decides before it needs a registry: tombstones, headers, configuration. */
class AvroSerdeLocalTest {
    /** Nothing listens here; any registry call would fail, proving none is made. */
    private static final SchemaRegistryClient UNUSED = new SchemaRegistryClient(
            RegistryClientSettings.forUrls("http://127.0.0.1:9").withRetry(RetryPolicy.NONE));

    @Test
    void tombstonesStayTombstones() {
        AvroSerde<TransactionEvent> serde = AvroSerde.specific(UNUSED, TransactionEvent.class);
        assertThat(serde.serializer().serialize("transactions", null)).isNull();
        assertThat(serde.deserializer().deserialize("transactions", null)).isNull();
    }

    @Test
    void badHeadersFailBeforeAnyRegistryCallWithCoordinates() {
        AvroDeserializer<TransactionEvent> d = new AvroDeserializer<>(UNUSED, TransactionEvent.getClassSchema());
        assertThatThrownBy(() -> d.deserialize("transactions", 4, 99L, new byte[] {0, 0, 1}))
                .isInstanceOfSatisfying(AvroDecodeException.class, e -> {
                    assertThat(e.problem()).isEqualTo(AvroDecodeException.Problem.TOO_SHORT);
                    assertThat(e.partition()).hasValue(4);
                    assertThat(e.offset()).hasValue(99L);
                })
                .hasMessageStartingWith("Cannot decode Avro record on transactions-4@99: TOO_SHORT");
        assertThatThrownBy(() -> d.deserialize("transactions", "{}".getBytes()))
                .isInstanceOfSatisfying(AvroDecodeException.class,
                        e -> assertThat(e.problem()).isEqualTo(AvroDecodeException.Problem.BAD_MAGIC_BYTE));
    }

    @Test
    void reflectiveInstancesNeedAUrlAndSayWhichSettingsAreWrong() {
        assertThatThrownBy(() -> new SpecificAvroSerde<TransactionEvent>().configure(Map.of(), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("schema.registry.url is required");
        assertThatThrownBy(() -> new GenericAvroSerde().configure(Map.of("schema.registry.url", "http://r",
                "specific.avro.reader", "maybe"), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("specific.avro.reader=maybe");
        assertThatThrownBy(() -> new AvroSerializer<TransactionEvent>().serialize("t", SampleEvents.v1()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("before configure()");
    }
}
