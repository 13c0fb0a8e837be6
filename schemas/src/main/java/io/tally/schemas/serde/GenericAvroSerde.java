package io.tally.schemas.serde;

import org.apache.avro.generic.GenericRecord;

/**
 * Generic-record serde that Kafka can construct by reflection ({@code default.value.serde}). Needs
 * {@link #configure} with {@code schema.registry.url}.
 */
public final class GenericAvroSerde extends AvroSerde<GenericRecord> {
    public GenericAvroSerde() {
        super(new AvroSerializer<>(), new AvroDeserializer<>());
    }

    /** With a shared client; configure is optional. */
    public GenericAvroSerde(SchemaRegistryClient registry) {
        super(new AvroSerializer<>(registry), new AvroDeserializer<>(registry));
    }
}
