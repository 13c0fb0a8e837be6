package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.BucketDocument;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Random;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class CompactBucketSerdeTest {
    @Test
    void roundTripsFullAndSparseDocumentsExactly() {
        BucketDocument full = new BucketDocument("shop|c-1", "spend|hour|1", "spend", "hour", "1970-01-01T01:00:00Z",
                new BigDecimal("123456789012.3456"), 7, new BigDecimal("0.0001"), new BigDecimal("-5.50"), 42, 3024000,
                "2024-01-01T00:00:00Z");
        BucketDocument sparse = new BucketDocument("é|ü", "n:sku/ä|day|-3", "n:sku/ä", "day", "x", null, 1, null, null, 1, null, null);
        var serde = CompactBucketSerde.serde();
        for (BucketDocument d : new BucketDocument[] {full, sparse}) {
            assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", d))).isEqualTo(d);
        }
        assertThat(serde.serializer().serialize("t", null)).isNull();
        // Scale survives: 5.50 and 5.5 are different decimals, and equals() says so.
        assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", full)).max().scale()).isEqualTo(2);
    }

    @Test
    void anUnknownFormatIsAClearError() {
        assertThatThrownBy(() -> CompactBucketSerde.serde().deserializer().deserialize("t", new byte[] {9, 0}))
                .isInstanceOf(SerializationException.class).hasMessageContaining("unknown bucket format 9");
    }

    @Test
    void writesTheBytesTheDataOutputStreamLayoutDefines() throws IOException {
        // The store and its changelog carry over between versions: the direct writer must give the very bytes the
        // DataOutputStream-based writer gave, for every decimal (sign, scale, size) and every kind of character.
        Random random = new Random(14);
        String[] texts = {"", "shop|c-1", "spend-per-customer-sku:sku-3|day|19782", "é|ü", "nul\0char", "€ and 𝄞", "2024-01-01T00:00:00Z"};
        for (int i = 0; i < 5_000; i++) {
            BucketDocument d = new BucketDocument(texts[random.nextInt(texts.length)], texts[random.nextInt(texts.length)],
                    texts[random.nextInt(texts.length)], "hour", texts[random.nextInt(texts.length)], decimal(random),
                    random.nextLong(), decimal(random), decimal(random), random.nextInt(1000), random.nextBoolean() ? null : random.nextInt(Integer.MAX_VALUE),
                    random.nextBoolean() ? null : texts[random.nextInt(texts.length)]);
            assertThat(CompactBucketSerde.write(d)).as("%s", d).isEqualTo(dataOutputStreamBytes(d));
            assertThat(CompactBucketSerde.read(CompactBucketSerde.write(d), "t")).isEqualTo(d.updatedAt() != null && d.updatedAt().isEmpty()
                    ? d.withUpdatedAt(null) : d);
        }
    }

    private static BigDecimal decimal(Random random) {
        return switch (random.nextInt(6)) {
            case 0 -> null;
            case 1 -> BigDecimal.valueOf(random.nextLong(), random.nextInt(8));
            case 2 -> BigDecimal.valueOf(random.nextInt(2000) - 1000, random.nextInt(4));
            case 3 -> new BigDecimal(new BigInteger(40 + random.nextInt(200), random).negate(), random.nextInt(30));
            case 4 -> new BigDecimal(new BigInteger(1 + random.nextInt(63), random), -random.nextInt(3));
            default -> BigDecimal.valueOf(random.nextBoolean() ? Long.MIN_VALUE : Long.MAX_VALUE, 2);
        };
    }

    /** The writer before it wrote straight into an array, kept as the reference of the format. */
    private static byte[] dataOutputStreamBytes(BucketDocument d) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(1);
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
        }
        return bytes.toByteArray();
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
}
