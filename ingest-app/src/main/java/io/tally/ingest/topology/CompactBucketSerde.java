package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
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

    static byte[] write(BucketDocument d) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(160);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT);
            out.writeUTF(d.pk());
            out.writeUTF(d.id());
            out.writeUTF(d.grade());
            out.writeUTF(d.unit());
            out.writeUTF(d.bucket());
            decimal(out, d.sum());
            out.writeLong(d.count());
            decimal(out, d.min());
            decimal(out, d.max());
            out.writeLong(d.ver());
            out.writeInt(d.ttl() == null ? -1 : d.ttl());
            out.writeUTF(d.updatedAt() == null ? "" : d.updatedAt());
        } catch (IOException e) {
            throw new SerializationException("cannot encode bucket " + d.pk() + "|" + d.id(), e);
        }
        return bytes.toByteArray();
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

    private static void decimal(DataOutputStream out, BigDecimal d) throws IOException {
        if (d == null) {
            out.writeByte(0);
            return;
        }
        byte[] unscaled = d.unscaledValue().toByteArray();
        out.writeByte(unscaled.length);
        out.writeInt(d.scale());
        out.write(unscaled);
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
