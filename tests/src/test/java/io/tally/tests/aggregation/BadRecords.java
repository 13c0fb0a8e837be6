package io.tally.tests.aggregation;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.EncoderFactory;

/**
 * Generates input records that are wrong in the ways real producers and broken disks get them wrong, from one seed:
 * random bytes, the wire-format magic with a schema id the registry never issued, real events cut short or with bits
 * flipped, events with huge strings and maps, and amounts beyond anything a decimal(18,4) can be. Each is built from
 * a real, registered event ({@code fz} domain, so nothing here can touch a good record's buckets).
 */
final class BadRecords {
    enum Kind {
        /** Bytes without the wire-format magic: DECODE_FAILED. */
        RANDOM_BYTES,
        /** Magic 0 and a schema id nobody registered: DECODE_FAILED. */
        UNKNOWN_SCHEMA_ID,
        /** A real event cut anywhere after its header: DECODE_FAILED. */
        TRUNCATED,
        /** A real event with 1-8 bits flipped after the header: usually DECODE_FAILED or INVALID; may still be a valid event. */
        BIT_FLIPPED,
        /** A real event with a 20-100 KB merchant and an attributes map of 1,000-5,000 entries: a valid event, however large. */
        HUGE_NON_KEY_FIELDS,
        /** Amount bytes holding a negative number or one beyond 10^14 (the schema says decimal(18,4)): INVALID. */
        EXTREME_DECIMAL,
        /** Amount with no bytes at all: valid Avro, but no number: INVALID (the source mapping cannot read the amount). */
        EMPTY_DECIMAL,
        /** No value, or a zero-length one: EMPTY_VALUE. */
        EMPTY
    }

    /** One generated record: what kind, and its bytes (null for a record without a value). */
    record Bad(Kind kind, byte[] value) {}

    private final Random random;
    private final int schemaId;
    private final Schema schema = TransactionEvent.getClassSchema();
    private int n;

    /** {@code schemaId}: the registered id of {@link TransactionEvent}'s schema under the input topic. */
    BadRecords(long seed, int schemaId) {
        this.random = new Random(seed);
        this.schemaId = schemaId;
    }

    Bad next() {
        // Huge records are one in a hundred: each is a few hundred KB, and a few dozen prove the point.
        Kind kind = random.nextInt(100) == 0 ? Kind.HUGE_NON_KEY_FIELDS : COMMON[random.nextInt(COMMON.length)];
        return new Bad(kind, bytes(kind));
    }

    private static final Kind[] COMMON = java.util.Arrays.stream(Kind.values()).filter(k -> k != Kind.HUGE_NON_KEY_FIELDS).toArray(Kind[]::new);

    private byte[] bytes(Kind kind) {
        return switch (kind) {
            case RANDOM_BYTES -> {
                byte[] b = new byte[1 + random.nextInt(300)];
                random.nextBytes(b);
                b[0] = (byte) (1 + random.nextInt(255)); // anything but the magic byte
                yield b;
            }
            case UNKNOWN_SCHEMA_ID -> {
                byte[] payload = real(baseEvent());
                ByteBuffer.wrap(payload).position(1).putInt(1_000_000 + random.nextInt(1_000_000_000)); // ids the registry never issued
                yield payload;
            }
            case TRUNCATED -> {
                byte[] whole = real(baseEvent());
                yield java.util.Arrays.copyOf(whole, WireFormat.HEADER_SIZE + random.nextInt(whole.length - WireFormat.HEADER_SIZE));
            }
            case BIT_FLIPPED -> {
                byte[] b = real(baseEvent());
                int flips = 1 + random.nextInt(8);
                for (int i = 0; i < flips; i++) {
                    int at = WireFormat.HEADER_SIZE + random.nextInt(b.length - WireFormat.HEADER_SIZE);
                    b[at] ^= (byte) (1 << random.nextInt(8));
                }
                yield b;
            }
            case HUGE_NON_KEY_FIELDS -> {
                Map<String, String> attributes = new HashMap<>();
                int entries = 1_000 + random.nextInt(4_000);
                for (int i = 0; i < entries; i++) attributes.put("k" + i + "-" + random.nextInt(), "v".repeat(1 + random.nextInt(20)));
                yield real(TransactionEvent.newBuilder(baseEvent()).setMerchant("m".repeat(20_000 + random.nextInt(80_000)))
                        .setAttributes(attributes).build());
            }
            case EXTREME_DECIMAL -> withAmountBytes(extremeAmount());
            case EMPTY_DECIMAL -> withAmountBytes(new byte[0]);
            case EMPTY -> random.nextBoolean() ? null : new byte[0];
        };
    }

    /** Two's complement, big-endian: negative (top bit set), or 9-64 bytes of magnitude (at least 2^64 / 10^4 > 10^15). */
    private byte[] extremeAmount() {
        byte[] b = new byte[random.nextBoolean() ? 1 + random.nextInt(16) : 9 + random.nextInt(56)];
        random.nextBytes(b);
        if (b.length < 9 || random.nextBoolean()) {
            b[0] |= (byte) 0x80; // negative
        } else {
            b[0] = (byte) (1 + random.nextInt(0x7F)); // positive, huge
        }
        return b;
    }

    /** A real event whose amount field holds exactly {@code amount} (written without the decimal conversion). */
    private byte[] withAmountBytes(byte[] amount) {
        TransactionEvent e = baseEvent();
        GenericRecord r = new GenericData.Record(schema);
        for (Schema.Field f : schema.getFields()) {
            Object v = e.get(f.pos());
            if (f.name().equals("amount")) v = ByteBuffer.wrap(amount);
            else if (f.name().equals("eventTime")) v = e.getEventTime().toEpochMilli();
            r.put(f.pos(), v instanceof CharSequence s ? s.toString() : v);
        }
        return withHeader(r, new GenericDatumWriter<>(schema));
    }

    /** A valid event of the {@code fz} domain, timed now. */
    private TransactionEvent baseEvent() {
        n++;
        return TransactionEvent.newBuilder().setTransactionId("fz-tx-" + n + "-" + random.nextInt()).setEventTime(Instant.now())
                .setDomain("fz").setCustomerId("fz-" + random.nextInt(50)).setEmail("fz@example.com").setPostalCode("9999")
                .setSku("fz-sku").setMerchant("m-1").setChannel("WEB").setAmount(new BigDecimal("12.3400")).setCurrency("USD")
                .setStatus("APPROVED").setAttributes(Map.of()).build();
    }

    private byte[] real(TransactionEvent e) {
        return withHeader(e, new org.apache.avro.specific.SpecificDatumWriter<>(TransactionEvent.class));
    }

    private <T> byte[] withHeader(T record, org.apache.avro.io.DatumWriter<T> writer) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(WireFormat.header(schemaId));
            var enc = EncoderFactory.get().binaryEncoder(out, null);
            writer.write(record, enc);
            enc.flush();
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
