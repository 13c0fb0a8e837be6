package io.tally.schemas.serde;

import org.apache.avro.specific.SpecificRecord;

/**
 * Specific-record serde that Kafka can construct by reflection ({@code default.value.serde}); it reads
 * into the generated class named like the writer schema, whatever {@code specific.avro.reader} says.
 * Needs {@link #configure} with {@code schema.registry.url}.
 */
public final class SpecificAvroSerde<T extends SpecificRecord> extends AvroSerde<T> {
    public SpecificAvroSerde() {
        super(new AvroSerializer<>(), new AvroDeserializer<>(null, null, true));
    }

    /** With a shared client; configure is optional. */
    public SpecificAvroSerde(SchemaRegistryClient registry) {
        super(new AvroSerializer<>(registry), new AvroDeserializer<>(registry, null, true));
    }
}
