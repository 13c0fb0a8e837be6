package io.tally.schemas.serde;

import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/** Serializer and deserializer for one specific record type, usable in Kafka Streams. */
public final class AvroSerde<T extends SpecificRecord> implements Serde<T> {
    private final AvroSerializer<T> serializer;
    private final AvroDeserializer<T> deserializer;

    public AvroSerde(SchemaRegistryClient registry, org.apache.avro.Schema readerSchema) {
        this.serializer = new AvroSerializer<>(registry);
        this.deserializer = new AvroDeserializer<>(registry, readerSchema);
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
