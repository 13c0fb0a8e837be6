package io.tally.schemas.serde;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;

/** Writes Avro records (specific or generic) in the Confluent wire format; null stays null (a tombstone). */
public final class AvroSerializer<T extends GenericContainer> implements Serializer<T> {
    private SchemaRegistryClient registry;
    private boolean isKey;
    private boolean autoRegister = true;

    public AvroSerializer() {}

    public AvroSerializer(SchemaRegistryClient registry) {
        this.registry = registry;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        this.isKey = isKey;
        this.autoRegister = AvroSerdeConfig.flag(configs, AvroSerdeConfig.AUTO_REGISTER_SCHEMAS, true);
        if (registry == null) registry = new SchemaRegistryClient(AvroSerdeConfig.registryUrl(configs));
    }

    @Override
    public byte[] serialize(String topic, T record) {
        if (record == null) return null;
        Schema schema = record.getSchema();
        String subject = AvroSerdeConfig.subject(topic, isKey);
        int id = autoRegister ? registry.register(subject, schema) : registry.lookup(subject, schema);
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream(256);
            ByteBuffer header = ByteBuffer.allocate(WireFormat.HEADER_SIZE);
            WireFormat.writeHeader(header, id);
            out.write(header.array());
            BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
            writer(record, schema).write(record, encoder);
            encoder.flush();
            return out.toByteArray();
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("Cannot encode " + schema.getFullName() + " for topic " + topic + ": " + e.getMessage(), e);
        }
    }

    private DatumWriter<T> writer(T record, Schema schema) {
        // Specific records need SpecificData so logical types (decimal, timestamp) use their conversions.
        return record instanceof SpecificRecord
                ? new SpecificDatumWriter<>(schema, SpecificData.getForSchema(schema))
                : new GenericDatumWriter<>(schema);
    }
}
