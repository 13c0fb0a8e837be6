package io.tally.ingest.topology;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.model.BucketDocument;
import java.io.IOException;
import java.math.BigDecimal;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * JSON bucket documents on {@code bucket-updates}: the same shape Cosmos stores, so the sink writes what it reads
 * without a mapping step.
 *
 * <p>Written field by field with Jackson's streaming generator rather than by the object mapper's reflection (the
 * profile in docs/benchmarks/aggregation-profile.md showed the bean serializer on the stream thread's commit path):
 * the same bytes as {@code ObjectMapper.writeValueAsBytes} of the record ({@link BucketDocument}'s fields in
 * declaration order, nulls left out, decimals as {@link BigDecimal#toString()}), which BucketDocumentSerdeTest
 * pins. Read with the object mapper, which tolerates any field order.
 */
public final class BucketDocumentSerde {
    /**
     * Header on a bucket's first update, the one that starts it: the sink writes it as a create rather than
     * probing with a conditional patch that can only answer 404 (a request unit for nothing). A create that
     * finds the bucket (409) falls back to the conditional patch, so a wrong hint costs what no hint did.
     */
    public static final String CREATED_HEADER = "tally.bucket.created";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonFactory FACTORY = JSON.getFactory();

    private BucketDocumentSerde() {}

    public static Serde<BucketDocument> serde() {
        Serializer<BucketDocument> ser = new Writer();
        Deserializer<BucketDocument> de = (topic, bytes) -> {
            if (bytes == null) return null;
            try {
                return JSON.readValue(bytes, BucketDocument.class);
            } catch (IOException e) {
                throw new SerializationException("Cannot decode a bucket document on " + topic + ": " + e.getMessage(), e);
            }
        };
        return Serdes.serdeFrom(ser, de);
    }

    /** Thread-safe: the topology's sink shares one serializer among all stream threads, so each thread has its own buffer. */
    static final class Writer implements Serializer<BucketDocument> {
        private final ThreadLocal<ByteArrayBuilder> buffers = ThreadLocal.withInitial(() -> new ByteArrayBuilder(512));

        @Override
        public byte[] serialize(String topic, BucketDocument d) {
            if (d == null) return null;
            ByteArrayBuilder buffer = buffers.get();
            buffer.reset();
            try (JsonGenerator g = FACTORY.createGenerator(buffer, JsonEncoding.UTF8)) {
                g.writeStartObject();
                string(g, "pk", d.pk());
                string(g, "id", d.id());
                string(g, "grade", d.grade());
                string(g, "unit", d.unit());
                string(g, "bucket", d.bucket());
                decimal(g, "sum", d.sum());
                g.writeNumberField("count", d.count());
                decimal(g, "min", d.min());
                decimal(g, "max", d.max());
                g.writeNumberField("ver", d.ver());
                if (d.ttl() != null) g.writeNumberField("ttl", d.ttl());
                string(g, "updatedAt", d.updatedAt());
                g.writeEndObject();
            } catch (IOException e) {
                throw new SerializationException("Cannot encode bucket " + d.pk() + "|" + d.id(), e);
            }
            return buffer.toByteArray();
        }

        private static void string(JsonGenerator g, String name, String value) throws IOException {
            if (value != null) g.writeStringField(name, value);
        }

        private static void decimal(JsonGenerator g, String name, BigDecimal value) throws IOException {
            if (value != null) g.writeNumberField(name, value);
        }
    }
}
