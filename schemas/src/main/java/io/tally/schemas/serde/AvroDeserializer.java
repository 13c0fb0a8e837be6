package io.tally.schemas.serde;

import java.io.IOException;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads Confluent-wire-format Avro. With {@code specific.avro.reader=true} and a reader schema from
 * the generated class, records written with an older or newer compatible schema resolve to it.
 */
public final class AvroDeserializer<T> implements Deserializer<T> {
    private SchemaRegistryClient registry;
    private boolean specific;
    private final Schema readerSchema;

    public AvroDeserializer() {
        this(null, null);
    }

    /** For specific records: the reader schema is the generated class's. */
    public AvroDeserializer(SchemaRegistryClient registry, Schema readerSchema) {
        this.registry = registry;
        this.readerSchema = readerSchema;
        this.specific = readerSchema != null;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        specific = specific || AvroSerdeConfig.flag(configs, AvroSerdeConfig.SPECIFIC_AVRO_READER, false);
        if (registry == null) registry = new SchemaRegistryClient(AvroSerdeConfig.registryUrl(configs));
    }

    @Override
    @SuppressWarnings("unchecked")
    public T deserialize(String topic, byte[] payload) {
        if (payload == null) return null;
        int id = WireFormat.schemaId(payload, topic);
        Schema writer = registry.schemaById(id);
        try {
            DatumReader<Object> reader;
            if (specific) {
                Schema target = readerSchema != null ? readerSchema : SpecificData.get().getSchema(SpecificData.get().getClass(writer));
                reader = new SpecificDatumReader<>(writer, target, SpecificData.getForSchema(target));
            } else {
                reader = new GenericDatumReader<>(writer);
            }
            return (T) reader.read(null, DecoderFactory.get().binaryDecoder(payload, WireFormat.HEADER_SIZE,
                    payload.length - WireFormat.HEADER_SIZE, null));
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("Cannot decode Avro (schema id " + id + ") on topic " + topic + ": " + e.getMessage(), e);
        }
    }
}
