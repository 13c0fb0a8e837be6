package io.tally.schemas.serde;

import java.nio.ByteBuffer;

/**
 * The Confluent Schema Registry wire format: magic byte 0, a 4-byte big-endian schema id, then the
 * Avro binary encoding of the record (no Avro container header, no length prefix). Stateless.
 */
public final class WireFormat {
    public static final byte MAGIC_BYTE = 0;
    public static final int HEADER_SIZE = 5;

    private WireFormat() {}

    /**
     * Reads the schema id from the header.
     *
     * @throws AvroDecodeException {@link AvroDecodeException.Problem#TOO_SHORT} or
     *         {@link AvroDecodeException.Problem#BAD_MAGIC_BYTE}, naming the topic
     */
    public static int schemaId(byte[] payload, String topic) {
        // The magic byte first: "{}" is better reported as JSON than as too short.
        if (payload.length > 0 && payload[0] != MAGIC_BYTE) {
            int b = payload[0] & 0xff;
            String hint = b == '{' || b == '[' ? " (looks like JSON)" : "";
            throw new AvroDecodeException(AvroDecodeException.Problem.BAD_MAGIC_BYTE, topic, -1,
                    String.format("payload starts with byte 0x%02x%s, not the wire-format magic byte 0x00; it was not "
                            + "written by a schema-registry Avro serializer", b, hint), null);
        }
        if (payload.length < HEADER_SIZE) {
            throw new AvroDecodeException(AvroDecodeException.Problem.TOO_SHORT, topic, -1,
                    "payload is " + payload.length + " bytes, shorter than the 5-byte wire-format header "
                            + "(magic byte 0 + 4-byte schema id)", null);
        }
        return ByteBuffer.wrap(payload, 1, 4).getInt();
    }

    /** Writes magic byte and schema id at the buffer's position. */
    public static void writeHeader(ByteBuffer out, int schemaId) {
        out.put(MAGIC_BYTE).putInt(schemaId);
    }

    /** The 5 header bytes for a schema id. */
    public static byte[] header(int schemaId) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE);
        writeHeader(b, schemaId);
        return b.array();
    }
}
