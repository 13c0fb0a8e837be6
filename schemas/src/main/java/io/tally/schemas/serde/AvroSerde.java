package io.tally.schemas.serde;

import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * An {@link AvroSerializer} and {@link AvroDeserializer} pair, e.g. for Kafka Streams
 * ({@code Consumed.with(keySerde, AvroSerde.specific(registry, TransactionEvent.class))}).
 * For {@code default.value.serde} in a Streams config use {@link SpecificAvroSerde} or
 * {@link GenericAvroSerde}, which Kafka can construct by reflection.
 *
 * <p>Thread-safe after {@link #configure}, like its two halves.
 */
public class AvroSerde<T extends GenericContainer> implements Serde<T> {
    private final AvroSerializer<T> serializer;
    private final AvroDeserializer<T> deserializer;

    /** Specific records of the generated class whose schema is {@code readerSchema}; null = generic. */
    public AvroSerde(SchemaRegistryClient registry, Schema readerSchema) {
        this(new AvroSerializer<>(registry), new AvroDeserializer<>(registry, readerSchema));
    }

    AvroSerde(AvroSerializer<T> serializer, AvroDeserializer<T> deserializer) {
        this.serializer = serializer;
        this.deserializer = deserializer;
    }

    /** A serde for one generated class, sharing the client. */
    public static <T extends SpecificRecord> AvroSerde<T> specific(SchemaRegistryClient registry, Class<T> type) {
        return new AvroSerde<>(registry, org.apache.avro.specific.SpecificData.get().getSchema(type));
    }

    /** A serde for generic records in the writer's schema, sharing the client. */
    public static AvroSerde<GenericRecord> generic(SchemaRegistryClient registry) {
        return new AvroSerde<>(registry, null);
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        serializer.configure(configs, isKey);
        deserializer.configure(configs, isKey);
    }

    @Override
    public Serializer<T> serializer() { return serializer; }

    @Override
    public Deserializer<T> deserializer() { return deserializer; }
}
