package io.tally.loadgen;

import io.tally.schemas.serde.WireFormat;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Turns the wire bytes of a valid event into bytes that must fail to decode, in the ways real input
 * breaks. Each variant fails deterministically (never "decodes by luck", as random bytes after a valid
 * header sometimes would: Avro does not check for trailing or missing-but-unread bytes).
 *
 * <p>Stateless and thread-safe.
 */
public final class Malformer {

    /** How a record is broken. */
    public enum Variant {
        /** Valid header, Avro body cut in half: the decoder runs out of bytes (EOF). */
        TRUNCATED,
        /** Valid header, then a negative string length where transactionId starts: Avro rejects it. */
        CORRUPT_LENGTH,
        /** A well-formed body under a schema id the registry does not know (404). */
        UNKNOWN_SCHEMA_ID,
        /** No wire-format header at all: JSON text, as a misconfigured producer sends (magic byte is '{'). */
        NOT_WIRE_FORMAT
    }

    /** A variant plus its parameter (which unknown id), drawn by the generator so the bytes are reproducible. */
    public record Malformation(Variant variant, int parameter) {}

    /**
     * Ids this far up are never handed out by a registry that counts from 1; {@code parameter} spreads
     * them so a cache of "unknown ids" in the pipeline is exercised too.
     */
    static final int UNKNOWN_ID_BASE = 2_000_000_000;

    private Malformer() {}

    /** The corrupted bytes; {@code wire} (a valid Confluent-wire-format encoding) is not modified. */
    public static byte[] apply(Malformation m, byte[] wire) {
        int bodyLength = wire.length - WireFormat.HEADER_SIZE;
        return switch (m.variant()) {
            case TRUNCATED -> Arrays.copyOf(wire, WireFormat.HEADER_SIZE + bodyLength / 2);
            case CORRUPT_LENGTH -> {
                byte[] out = wire.clone();
                out[WireFormat.HEADER_SIZE] = 0x01; // zig-zag varint -1: "Malformed data. Length is negative"
                yield out;
            }
            case UNKNOWN_SCHEMA_ID -> {
                byte[] out = wire.clone();
                ByteBuffer.wrap(out, 1, 4).putInt(UNKNOWN_ID_BASE + Math.floorMod(m.parameter(), 1_000));
                yield out;
            }
            case NOT_WIRE_FORMAT -> ("{\"malformed\":true,\"n\":" + m.parameter() + "}").getBytes(StandardCharsets.UTF_8);
        };
    }
}
