package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * A compact binary form of bucket documents for the topology's own topic and store (the repartition
 * topic, the bucket store and its changelog). Every event crosses these several times, once per
 * delta, and reflection-based JSON was the largest cost of the stream thread; bucket-updates, which
 * other programs read, stays JSON ({@link BucketDocumentSerde}).
 *
 * <p>Layout: format version byte, pk, id, grade, unit, bucket (modified UTF-8), sum, count, min, max,
 * ver, ttl (-1 = none), updatedAt ("" = none); decimals as presence byte, scale, unscaled bytes.
 */
public final class CompactBucketSerde {
    private static final byte FORMAT = 1;

    private CompactBucketSerde() {}

    public static Serde<BucketDocument> serde() {
        Serializer<BucketDocument> ser = (topic, d) -> d == null ? null : write(d);
        Deserializer<BucketDocument> de = (topic, bytes) -> bytes == null ? null : read(bytes, topic);
        return Serdes.serdeFrom(ser, de);
    }

    /**
     * The bytes {@code DataOutputStream} would write for this layout, written straight into one array of the exact
     * size (the stream's copies, {@code writeUTF}'s per-string buffer and {@code BigInteger} per decimal were a tenth
     * of the stream thread's time at the commit). {@link #read} still reads it with {@code DataInputStream}.
     */
    static byte[] write(BucketDocument d) {
        String updatedAt = d.updatedAt() == null ? "" : d.updatedAt();
        int size = 1 + utfSize(d.pk()) + utfSize(d.id()) + utfSize(d.grade()) + utfSize(d.unit()) + utfSize(d.bucket())
                + decimalSize(d.sum()) + 8 + decimalSize(d.min()) + decimalSize(d.max()) + 8 + 4 + utfSize(updatedAt);
        Out out = new Out(new byte[size]);
        out.b[out.p++] = FORMAT;
        out.utf(d.pk());
        out.utf(d.id());
        out.utf(d.grade());
        out.utf(d.unit());
        out.utf(d.bucket());
        out.decimal(d.sum());
        out.longValue(d.count());
        out.decimal(d.min());
        out.decimal(d.max());
        out.longValue(d.ver());
        out.intValue(d.ttl() == null ? -1 : d.ttl());
        out.utf(updatedAt);
        return out.b;
    }

    /** Length of a string in modified UTF-8 with its two-byte length prefix, as {@code writeUTF} writes it. */
    private static int utfSize(String s) {
        int n = s.length(), bytes = n;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80 || c == 0) bytes += c >= 0x800 ? 2 : 1;
        }
        if (bytes > 0xFFFF) throw new SerializationException("string of " + bytes + " bytes is too long for the bucket format");
        return 2 + bytes;
    }

    private static int decimalSize(BigDecimal d) {
        if (d == null) return 1;
        return 1 + 4 + unscaledLength(d);
    }

    /** {@code d.unscaledValue().toByteArray().length}, without making the BigInteger when the value fits a long. */
    private static int unscaledLength(BigDecimal d) {
        if (d.precision() > 18) return d.unscaledValue().toByteArray().length;
        long v = unscaledLong(d);
        // Two's complement, minimal: bitLength (excluding the sign) + 1 sign bit, rounded up to bytes.
        int bitLength = 64 - Long.numberOfLeadingZeros(v < 0 ? ~v : v);
        return bitLength / 8 + 1;
    }

    /** The unscaled value of a decimal of at most 18 digits (so it fits a long). */
    static long unscaledLong(BigDecimal d) {
        return d.scale() == 0 ? d.longValueExact() : d.scaleByPowerOfTen(d.scale()).longValueExact();
    }

    /** A cursor over the exact-size array: big-endian, as {@code DataOutputStream} writes. */
    private static final class Out {
        final byte[] b;
        int p;

        Out(byte[] b) {
            this.b = b;
        }

        void utf(String s) {
            int start = p;
            p += 2;
            for (int i = 0, n = s.length(); i < n; i++) {
                char c = s.charAt(i);
                if (c >= 0x01 && c < 0x80) {
                    b[p++] = (byte) c;
                } else if (c < 0x800) {
                    b[p++] = (byte) (0xC0 | (c >> 6));
                    b[p++] = (byte) (0x80 | (c & 0x3F));
                } else {
                    b[p++] = (byte) (0xE0 | (c >> 12));
                    b[p++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                    b[p++] = (byte) (0x80 | (c & 0x3F));
                }
            }
            int length = p - start - 2;
            b[start] = (byte) (length >>> 8);
            b[start + 1] = (byte) length;
        }

        void decimal(BigDecimal d) {
            if (d == null) {
                b[p++] = 0;
                return;
            }
            int length = unscaledLength(d);
            b[p++] = (byte) length;
            intValue(d.scale());
            if (d.precision() > 18) {
                byte[] unscaled = d.unscaledValue().toByteArray();
                System.arraycopy(unscaled, 0, b, p, length);
                p += length;
            } else {
                long v = unscaledLong(d);
                for (int shift = 8 * (length - 1); shift >= 0; shift -= 8) b[p++] = (byte) (v >> shift);
            }
        }

        void longValue(long v) {
            for (int shift = 56; shift >= 0; shift -= 8) b[p++] = (byte) (v >> shift);
        }

        void intValue(int v) {
            for (int shift = 24; shift >= 0; shift -= 8) b[p++] = (byte) (v >> shift);
        }
    }

    static BucketDocument read(byte[] bytes, String topic) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte format = in.readByte();
            if (format != FORMAT) throw new SerializationException("unknown bucket format " + format + " on " + topic);
            String pk = in.readUTF(), id = in.readUTF(), grade = in.readUTF(), unit = in.readUTF(), bucket = in.readUTF();
            BigDecimal sum = decimal(in);
            long count = in.readLong();
            BigDecimal min = decimal(in), max = decimal(in);
            long ver = in.readLong();
            int ttl = in.readInt();
            String updatedAt = in.readUTF();
            return new BucketDocument(pk, id, grade, unit, bucket, sum, count, min, max, ver,
                    ttl < 0 ? null : ttl, updatedAt.isEmpty() ? null : updatedAt);
        } catch (IOException e) {
            throw new SerializationException("cannot decode a bucket on " + topic + ": " + e.getMessage(), e);
        }
    }

    private static BigDecimal decimal(DataInputStream in) throws IOException {
        int length = in.readUnsignedByte();
        if (length == 0) return null; // BigInteger.toByteArray is never empty, so 0 means absent
        int scale = in.readInt();
        byte[] unscaled = new byte[length];
        in.readFully(unscaled);
        return new BigDecimal(new BigInteger(unscaled), scale);
    }
}
