package io.tally.schemas.serde;

import java.nio.ByteBuffer;
import org.apache.kafka.common.errors.SerializationException;

/**
 * The Confluent Schema Registry wire format: magic byte 0, a 4-byte big-endian schema id, then the
 * Avro binary encoding of the record.
 */
public final class WireFormat {
    public static final byte MAGIC_BYTE = 0;
    public static final int HEADER_SIZE = 5;

    private WireFormat() {}

    /** Reads the schema id from the header, rejecting payloads that cannot be in this format. */
    public static int schemaId(byte[] payload, String topic) {
        if (payload.length < HEADER_SIZE) {
            throw new SerializationException("Payload on topic " + topic + " is " + payload.length
                    + " bytes, shorter than the 5-byte Confluent wire-format header");
        }
        if (payload[0] != MAGIC_BYTE) {
            throw new SerializationException("Payload on topic " + topic + " starts with byte " + payload[0]
                    + ", not the Confluent wire-format magic byte 0");
        }
        return ByteBuffer.wrap(payload, 1, 4).getInt();
    }

    public static void writeHeader(ByteBuffer out, int schemaId) {
        out.put(MAGIC_BYTE).putInt(schemaId);
    }
}
