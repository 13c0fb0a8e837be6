package io.tally.schemas.serde;

import java.util.OptionalInt;
import java.util.OptionalLong;
import org.apache.kafka.common.errors.SerializationException;

/**
 * A record value that could not be turned into an Avro record, with what is wrong ({@link Problem}),
 * the topic and, when the caller knew them, partition and offset (see
 * {@link AvroDeserializer#deserialize(String, int, long, byte[])}), and the writer schema id when the
 * header could be read.
 *
 * <p>For a dead-letter queue the important question is {@link #isBadInput()}: true when the bytes
 * themselves are the problem (route them to the DLQ and go on); false when the registry could not be
 * asked (the same bytes will decode once it is back, so retry or stop instead of dead-lettering).
 *
 * <p>Immutable; {@link #withCoordinates} returns a new instance.
 */
public final class AvroDecodeException extends SerializationException {
    /** What is wrong with the record, or with decoding it. */
    public enum Problem {
        /** Fewer than 5 bytes: no room for the wire-format header. */
        TOO_SHORT(true),
        /** First byte is not 0: not written by a schema-registry serializer (plain JSON, another format). */
        BAD_MAGIC_BYTE(true),
        /** The registry has no schema with the id in the header (40403). */
        UNKNOWN_SCHEMA_ID(true),
        /** The writer schema cannot be resolved to the reader schema (missing default, type change). */
        INCOMPATIBLE_WRITER_SCHEMA(true),
        /** No generated class for the writer schema's record name is on the classpath (specific reader). */
        NO_SPECIFIC_CLASS(true),
        /** The Avro body is truncated or corrupt for its writer schema. */
        CORRUPT_AVRO(true),
        /** The registry could not be asked (down, 5xx, auth); the record may be fine. */
        REGISTRY_UNAVAILABLE(false);

        private final boolean badInput;

        Problem(boolean badInput) {
            this.badInput = badInput;
        }

        public boolean badInput() { return badInput; }
    }

    private final Problem problem;
    private final String detail;
    private final String topic;
    private final int schemaId;
    private final OptionalInt partition;
    private final OptionalLong offset;

    public AvroDecodeException(Problem problem, String topic, int schemaId, String detail, Throwable cause) {
        this(problem, topic, schemaId, OptionalInt.empty(), OptionalLong.empty(), detail, cause);
    }

    private AvroDecodeException(Problem problem, String topic, int schemaId, OptionalInt partition, OptionalLong offset,
                                String detail, Throwable cause) {
        super(message(problem, topic, schemaId, partition, offset, detail), cause);
        this.problem = problem;
        this.detail = detail;
        this.topic = topic;
        this.schemaId = schemaId;
        this.partition = partition;
        this.offset = offset;
    }

    /** The same failure located at {@code topic-partition@offset}. */
    public AvroDecodeException withCoordinates(int partition, long offset) {
        return new AvroDecodeException(problem, topic, schemaId, OptionalInt.of(partition), OptionalLong.of(offset),
                detail, getCause());
    }

    public Problem problem() { return problem; }

    /** True when the record itself is at fault (dead-letter it); false when the registry is (retry). */
    public boolean isBadInput() { return problem.badInput(); }

    public String topic() { return topic; }

    /** The writer schema id from the header, or -1 when the header was unreadable. */
    public int schemaId() { return schemaId; }

    public OptionalInt partition() { return partition; }

    public OptionalLong offset() { return offset; }

    /** The problem without the location prefix, e.g. for a DLQ reason header. */
    public String detail() { return detail; }

    private static String message(Problem problem, String topic, int schemaId, OptionalInt partition,
                                  OptionalLong offset, String detail) {
        StringBuilder where = new StringBuilder(topic == null ? "(unknown topic)" : topic);
        if (partition.isPresent()) where.append('-').append(partition.getAsInt());
        if (offset.isPresent()) where.append('@').append(offset.getAsLong());
        return "Cannot decode Avro record on " + where + (schemaId >= 0 ? " (writer schema id " + schemaId + ")" : "")
                + ": " + problem + ": " + detail;
    }
}
