package io.tally.schemas.serde;

import java.io.EOFException;
import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.AvroTypeException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads Confluent-wire-format Avro written by any Confluent-compatible serializer.
 *
 * <p>What comes out: with a reader schema (the generated class's, {@code TransactionEvent.getClassSchema()})
 * every record is resolved to that class, whatever compatible version wrote it (fields added later are
 * skipped, fields the writer lacked get their defaults); a reader schema without a matching generated
 * class gives GenericRecords resolved to it. With {@code specific.avro.reader=true} and no
 * reader schema, the generated class named like the writer schema is used. Otherwise a GenericRecord in
 * the writer's schema ({@code avro.use.logical.type.converters=true} turns decimals into BigDecimal etc.).
 *
 * <p><b>Threads:</b> configure once, then call from any number of threads; the per-writer-schema
 * DatumReaders are cached (bounded) and shared, which Avro supports.
 *
 * <p><b>Errors:</b> {@code null} in, {@code null} out (tombstones). Everything else that fails is an
 * {@link AvroDecodeException} naming the topic (and partition/offset via
 * {@link #deserialize(String, int, long, byte[])}) and saying whether the bytes are at fault
 * ({@link AvroDecodeException#isBadInput()}) or the registry could not be asked.
 */
public final class AvroDeserializer<T> implements Deserializer<T> {
    private static final int READER_CACHE_SIZE = 256;

    private final Schema readerSchema;
    private final boolean forceSpecific;
    private final Map<Integer, DatumReader<Object>> readers =
            Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Integer, DatumReader<Object>> eldest) {
                    return size() > READER_CACHE_SIZE;
                }
            });
    private volatile SchemaRegistryClient registry;
    private volatile AvroSerdeConfig config;

    /** For Kafka's reflective construction: {@link #configure} must name the registry. */
    public AvroDeserializer() {
        this(null, null, false);
    }

    /** Generic records (or specific ones when configured with {@code specific.avro.reader=true}). */
    public AvroDeserializer(SchemaRegistryClient registry) {
        this(registry, null, false);
    }

    /** Specific records resolved to {@code readerSchema} (the generated class's); null = as {@link #AvroDeserializer(SchemaRegistryClient)}. */
    public AvroDeserializer(SchemaRegistryClient registry, Schema readerSchema) {
        this(registry, readerSchema, false);
    }

    AvroDeserializer(SchemaRegistryClient registry, Schema readerSchema, boolean forceSpecific) {
        this.registry = registry;
        this.readerSchema = readerSchema;
        this.forceSpecific = forceSpecific;
        this.config = registry == null ? null : AvroSerdeConfig.parse(Map.of(), false);
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        AvroSerdeConfig parsed = AvroSerdeConfig.parse(configs, registry == null);
        if (registry == null) registry = new SchemaRegistryClient(parsed.registry());
        readers.clear(); // they depend on the settings
        this.config = parsed;
    }

    @Override
    public T deserialize(String topic, byte[] payload) {
        return decode(topic, payload);
    }

    /**
     * As {@link #deserialize(String, byte[])}, with the record's coordinates in any exception, for callers
     * that know them (a Streams processor has {@code context.recordMetadata()}).
     */
    public T deserialize(String topic, int partition, long offset, byte[] payload) {
        try {
            return decode(topic, payload);
        } catch (AvroDecodeException e) {
            throw e.withCoordinates(partition, offset);
        }
    }

    @SuppressWarnings("unchecked")
    private T decode(String topic, byte[] payload) {
        if (payload == null) return null;
        SchemaRegistryClient client = registry;
        if (client == null) {
            throw new IllegalStateException("AvroDeserializer used before configure() and without a SchemaRegistryClient");
        }
        int id = WireFormat.schemaId(payload, topic);
        DatumReader<Object> reader = readers.get(id);
        if (reader == null) {
            reader = newReader(client, topic, id);
            readers.put(id, reader);
        }
        try {
            return (T) reader.read(null, DecoderFactory.get().binaryDecoder(payload, WireFormat.HEADER_SIZE,
                    payload.length - WireFormat.HEADER_SIZE, null));
        } catch (AvroTypeException e) {
            throw new AvroDecodeException(AvroDecodeException.Problem.INCOMPATIBLE_WRITER_SCHEMA, topic, id,
                    "the writer schema does not resolve to the reader schema: " + e.getMessage(), e);
        } catch (EOFException e) {
            throw new AvroDecodeException(AvroDecodeException.Problem.CORRUPT_AVRO, topic, id,
                    "the Avro body ends early (" + (payload.length - WireFormat.HEADER_SIZE) + " bytes after the header)", e);
        } catch (IOException | RuntimeException e) {
            // Corrupt bytes surface as whatever the decoder trips over: a bad length or union index, an array
            // index, a size limit. All of them mean the same thing here.
            throw new AvroDecodeException(AvroDecodeException.Problem.CORRUPT_AVRO, topic, id,
                    "the Avro body is corrupt for its writer schema: " + e, e);
        }
    }

    private DatumReader<Object> newReader(SchemaRegistryClient client, String topic, int id) {
        Schema writer;
        try {
            writer = client.schemaById(id);
        } catch (SchemaRegistryException e) {
            if (e.kind() == SchemaRegistryException.Kind.SCHEMA_NOT_FOUND) {
                throw new AvroDecodeException(AvroDecodeException.Problem.UNKNOWN_SCHEMA_ID, topic, id,
                        "the registry has no schema with id " + id + " (written against another registry, or corrupt header)", e);
            }
            throw new AvroDecodeException(AvroDecodeException.Problem.REGISTRY_UNAVAILABLE, topic, id,
                    "cannot fetch the writer schema: " + e.getMessage(), e);
        }
        AvroSerdeConfig cfg = config;
        boolean converters = cfg != null && cfg.logicalTypeConverters();
        GenericData generic = converters ? AvroModels.WITH_CONVERSIONS : AvroModels.RAW;
        if (readerSchema != null) {
            // A schema of another version than the generated class (say v2 while the class is v1) must not
            // be read into that class: its fields would not line up. It is read generically instead.
            Class<?> generated = SpecificData.get().getClass(readerSchema);
            if (generated != null && readerSchema.equals(SpecificData.get().getSchema(generated))) {
                return new SpecificDatumReader<>(writer, readerSchema, SpecificData.getForSchema(readerSchema));
            }
            return new GenericDatumReader<>(writer, readerSchema, generic);
        }
        if (forceSpecific || (cfg != null && cfg.specificReader())) {
            Class<?> generated = SpecificData.get().getClass(writer);
            if (generated == null || writer.getType() != Schema.Type.RECORD) {
                throw new AvroDecodeException(AvroDecodeException.Problem.NO_SPECIFIC_CLASS, topic, id,
                        "specific reader wanted but no generated class " + writer.getFullName() + " is on the classpath", null);
            }
            Schema target = SpecificData.get().getSchema(generated);
            return new SpecificDatumReader<>(writer, target, SpecificData.getForSchema(target));
        }
        return new GenericDatumReader<>(writer, writer, generic);
    }
}
