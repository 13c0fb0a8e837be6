package io.tally.schemas.serde;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Writes Avro records, specific (generated classes) or generic, in the Confluent wire format, with the
 * schema id from a Confluent-API registry under the subject that {@code value.subject.name.strategy} (or
 * {@code key.subject.name.strategy} when configured as a key serializer) names: {@code <topic>-value} /
 * {@code <topic>-key} by default, the record's full name, or {@code <topic>-<record full name>} (see
 * {@link SubjectNameStrategy}; the record-name strategies need a record schema). {@code null} stays
 * {@code null}, so a tombstone remains a tombstone.
 *
 * <p>Which schema id: with {@code auto.register.schemas=true} (default) the record's schema is registered
 * (once per schema, then cached); with {@code false} it must already be registered under the subject
 * (a deploy step does that) or serialization fails naming the subject; with {@code use.latest.version=true}
 * the record is written with the subject's latest schema, so an older producer writes what current
 * readers expect (the record's schema must resolve to it, else a clear error).
 *
 * <p><b>Threads:</b> configure once, then {@link #serialize} may be called from any number of threads
 * (a KafkaProducer is shared across threads; Kafka Streams shares serde instances between stream threads).
 * <b>Errors:</b> {@link SchemaRegistryException} for registry failures, {@link SerializationException}
 * for records that do not fit their schema; both name the topic.
 */
public final class AvroSerializer<T extends GenericContainer> implements Serializer<T> {
    private volatile SchemaRegistryClient registry;
    private volatile AvroSerdeConfig config;
    private volatile boolean isKey;

    /** For Kafka's reflective construction: {@link #configure} must name the registry. */
    public AvroSerializer() {}

    /** With a shared client; {@link #configure} is optional (defaults: auto-register, {@code <topic>-value}). */
    public AvroSerializer(SchemaRegistryClient registry) {
        this.registry = registry;
        this.config = AvroSerdeConfig.parse(Map.of(), false);
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        AvroSerdeConfig parsed = AvroSerdeConfig.parse(configs, registry == null);
        if (registry == null) registry = new SchemaRegistryClient(parsed.registry());
        this.isKey = isKey;
        this.config = parsed;
    }

    @Override
    public byte[] serialize(String topic, T record) {
        if (record == null) return null;
        SchemaRegistryClient client = registry;
        AvroSerdeConfig cfg = config;
        if (client == null || cfg == null) {
            throw new IllegalStateException("AvroSerializer used before configure() and without a SchemaRegistryClient");
        }
        Schema schema = record.getSchema();
        String subject = cfg.subject(topic, isKey, schema);
        int id;
        Schema writeWith = schema;
        try {
            if (cfg.autoRegister()) {
                id = client.register(subject, schema);
            } else if (cfg.useLatestVersion()) {
                RegisteredSchema latest = client.latest(subject);
                id = latest.id();
                writeWith = latest.schema();
            } else {
                id = client.lookup(subject, schema);
            }
        } catch (SchemaRegistryException e) {
            throw e.withContext(explain(e, subject, topic, schema, cfg));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        out.writeBytes(WireFormat.header(id));
        try {
            if (writeWith.equals(schema)) {
                encode(record, schema, out);
            } else {
                out.writeBytes(convert(record, schema, writeWith));
            }
        } catch (IOException | AvroRuntimeException | SerializationException | ClassCastException | NullPointerException e) {
            // A record that does not fit its schema (null in a non-null field, wrong type) or the latest schema.
            throw new SerializationException("Cannot encode " + schema.getFullName() + " for topic " + topic
                    + " (subject " + subject + ", schema id " + id + "): " + e, e);
        }
        return out.toByteArray();
    }

    private void encode(T record, Schema schema, ByteArrayOutputStream out) throws IOException {
        BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
        writer(record, schema).write(record, encoder);
        encoder.flush();
    }

    /**
     * use.latest.version with a record of another (older) schema: encode with the record's schema, then
     * let Avro's schema resolution read that as the latest schema (filling defaults for new fields) and
     * encode the result. Costs a second pass, only for records whose schema differs from the latest.
     */
    private byte[] convert(T record, Schema own, Schema latest) throws IOException {
        ByteArrayOutputStream tmp = new ByteArrayOutputStream(256);
        encode(record, own, tmp);
        Object resolved;
        try {
            resolved = new GenericDatumReader<>(own, latest, AvroModels.RAW)
                    .read(null, DecoderFactory.get().binaryDecoder(tmp.toByteArray(), null));
        } catch (AvroRuntimeException e) {
            throw new SerializationException("the subject's latest schema " + latest.getFullName() + " cannot represent "
                    + "this record of the record's own schema (fields added since need defaults): " + e.getMessage(), e);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
        new GenericDatumWriter<>(latest, AvroModels.RAW).write(resolved, encoder);
        encoder.flush();
        return out.toByteArray();
    }

    private DatumWriter<T> writer(T record, Schema schema) {
        // Specific records need their generated class's SpecificData for logical types (decimal, timestamp);
        // generic records may hold raw values or Java types, and WITH_CONVERSIONS writes both.
        return record instanceof SpecificRecord
                ? new SpecificDatumWriter<>(schema, SpecificData.getForSchema(schema))
                : new GenericDatumWriter<>(schema, AvroModels.WITH_CONVERSIONS);
    }

    private static String explain(SchemaRegistryException e, String subject, String topic, Schema schema, AvroSerdeConfig cfg) {
        String what = "Cannot get a schema id for " + schema.getFullName() + " on topic " + topic + " (subject " + subject + ")";
        if (!cfg.autoRegister() && !cfg.useLatestVersion()
                && (e.kind() == SchemaRegistryException.Kind.SUBJECT_NOT_FOUND || e.kind() == SchemaRegistryException.Kind.SCHEMA_NOT_FOUND)) {
            return what + ": the schema is not registered under the subject and " + AvroSerdeConfig.AUTO_REGISTER_SCHEMAS
                    + "=false; register it first (deploy step) or enable " + AvroSerdeConfig.AUTO_REGISTER_SCHEMAS;
        }
        if (cfg.useLatestVersion() && e.kind() == SchemaRegistryException.Kind.SUBJECT_NOT_FOUND) {
            return what + ": " + AvroSerdeConfig.USE_LATEST_VERSION + "=true but the subject has no versions yet";
        }
        return what;
    }
}
