package io.tally.model;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;

/**
 * The JSON form of a bucket document, as it travels on {@code bucket-updates}: the same shape Cosmos stores, so
 * the sink writes what it reads without a mapping step. The aggregation stage writes with {@link #write}, the sink
 * reads with {@link #read}; nothing else encodes or decodes it.
 *
 * <p>Written field by field with Jackson's streaming generator rather than by the object mapper's reflection (the
 * profile in docs/benchmarks/aggregation-profile.md showed the bean serializer on the stream thread's commit path):
 * the same bytes as {@code ObjectMapper.writeValueAsBytes} of the record ({@link BucketDocument}'s fields in
 * declaration order, null fields left out, decimals as {@link BigDecimal#toString()}), which BucketDocumentJsonTest
 * pins. Read with the object mapper, which tolerates any field order, unknown fields and explicit nulls.
 *
 * <p>Thread-safe: every thread writes into a buffer of its own.
 */
public final class BucketDocumentJson {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonFactory FACTORY = JSON.getFactory();
    private static final ThreadLocal<ByteArrayBuilder> BUFFERS = ThreadLocal.withInitial(() -> new ByteArrayBuilder(512));

    private BucketDocumentJson() {}

    /** The document's bytes, null fields left out. */
    public static byte[] write(BucketDocument d) {
        ByteArrayBuilder buffer = BUFFERS.get();
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
            throw new UncheckedIOException("cannot encode bucket " + d.pk() + BucketId.SEPARATOR + d.id(), e);
        }
        return buffer.toByteArray();
    }

    /**
     * A document from its bytes.
     *
     * @throws IllegalArgumentException when the bytes are not a bucket document (not JSON, wrong types, no pk or
     *                                  id); the message says why, without the input
     */
    public static BucketDocument read(byte[] bytes) {
        BucketDocument d;
        try {
            d = JSON.readValue(bytes, BucketDocument.class);
        } catch (IOException e) {
            String m = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
            throw new IllegalArgumentException(m == null ? "not a bucket document" : m, e);
        }
        if (d == null || d.pk() == null || d.id() == null) throw new IllegalArgumentException("no pk or id");
        return d;
    }

    private static void string(JsonGenerator g, String name, String value) throws IOException {
        if (value != null) g.writeStringField(name, value);
    }

    private static void decimal(JsonGenerator g, String name, BigDecimal value) throws IOException {
        if (value != null) g.writeNumberField(name, value);
    }
}
