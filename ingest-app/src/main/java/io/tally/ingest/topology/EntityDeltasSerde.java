package io.tally.ingest.topology;

import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Binary form of {@link EntityDeltas} on the topology's repartition topic, written once and read once
 * per pk and commit interval. Only Tally reads this topic, and only the version that wrote it, so the format is
 * private; the leading version byte makes a mix-up fail loudly instead of decoding garbage.
 *
 * <p>Layout: version, rules generation (a long), pk (length-prefixed UTF-8), delta count, then per delta: rule (UTF-8), qualifier (a presence
 * byte, then UTF-8), unit ordinal,
 * bucket index, aggregation bits, ttl seconds, count, then sum, min and max, each a scale byte ({@code 0x7F}:
 * absent) and the unscaled long when it fits, else a flagged scale and length-prefixed two's-complement bytes.
 */
public final class EntityDeltasSerde {
    /** 3: the rules generation after the version byte; 2 (read as generation 0): rule and qualifier apart; 1 carried the grade id. */
    private static final byte FORMAT = 3;
    private static final byte FORMAT_BEFORE_GENERATIONS = 2;
    private static final TimeUnit[] UNITS = TimeUnit.values();
    private static final int BIG_AMOUNT = 0x80; // scale byte flag: the unscaled value does not fit a long
    private static final int MAX_SCALE = 0x7E;
    private static final byte ABSENT = (byte) 0x7F; // scale byte of a value the rule does not aggregate

    private EntityDeltasSerde() {}

    public static Serde<EntityDeltas> serde() {
        Serializer<EntityDeltas> ser = (topic, d) -> d == null ? null : write(d);
        Deserializer<EntityDeltas> de = (topic, bytes) -> bytes == null ? null : read(bytes, topic);
        return Serdes.serdeFrom(ser, de);
    }

    static byte[] write(EntityDeltas d) {
        byte[] pk = d.pk().getBytes(StandardCharsets.UTF_8);
        List<EntityDeltas.Delta> deltas = d.deltas();
        if (deltas.size() > 0xFFFF) throw new SerializationException("more than 65535 deltas for one entity: " + deltas.size());
        byte[][] rules = new byte[deltas.size()][];
        byte[][] qualifiers = new byte[deltas.size()][];
        int size = 1 + 8 + 2 + pk.length + 2;
        for (int i = 0; i < rules.length; i++) {
            EntityDeltas.Delta delta = deltas.get(i);
            // Consecutive deltas mostly share a rule (one per unit of a rule): encode it once.
            rules[i] = i > 0 && delta.rule().equals(deltas.get(i - 1).rule()) ? rules[i - 1]
                    : delta.rule().getBytes(StandardCharsets.UTF_8);
            qualifiers[i] = delta.qualifier() == null ? null
                    : i > 0 && delta.qualifier().equals(deltas.get(i - 1).qualifier()) ? qualifiers[i - 1]
                    : delta.qualifier().getBytes(StandardCharsets.UTF_8);
            size += 2 + rules[i].length + 1 + (qualifiers[i] == null ? 0 : 2 + qualifiers[i].length) + 1 + 8 + 1 + 4 + 8
                    + amountSize(delta.sum()) + amountSize(delta.min()) + amountSize(delta.max());
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        out.put(FORMAT);
        out.putLong(d.generation());
        string(out, pk);
        out.putShort((short) deltas.size());
        for (int i = 0; i < rules.length; i++) {
            EntityDeltas.Delta delta = deltas.get(i);
            string(out, rules[i]);
            out.put((byte) (qualifiers[i] == null ? 0 : 1));
            if (qualifiers[i] != null) string(out, qualifiers[i]);
            out.put((byte) delta.unit().ordinal());
            out.putLong(delta.bucketIndex());
            out.put((byte) delta.aggregations());
            out.putInt(delta.ttlSeconds());
            out.putLong(delta.count());
            amount(out, delta.sum());
            amount(out, delta.min());
            amount(out, delta.max());
        }
        return out.array();
    }

    static EntityDeltas read(byte[] bytes, String topic) {
        try {
            ByteBuffer in = ByteBuffer.wrap(bytes);
            byte format = in.get();
            if (format != FORMAT && format != FORMAT_BEFORE_GENERATIONS) {
                throw new SerializationException("unknown entity-deltas format " + format + " on " + topic);
            }
            long generation = format == FORMAT ? in.getLong() : 0; // written before generations: generation 0
            String pk = string(in);
            int n = Short.toUnsignedInt(in.getShort());
            List<EntityDeltas.Delta> deltas = new ArrayList<>(n);
            String previousRule = null;
            for (int i = 0; i < n; i++) {
                String rule = string(in);
                if (rule.equals(previousRule)) rule = previousRule; // one String per rule, not per unit
                previousRule = rule;
                String qualifier = in.get() == 0 ? null : string(in);
                deltas.add(new EntityDeltas.Delta(rule, qualifier, UNITS[in.get()], in.getLong(), in.get(), in.getInt(), in.getLong(),
                        amount(in), amount(in), amount(in)));
            }
            return new EntityDeltas(pk, deltas, generation);
        } catch (BufferUnderflowException | IndexOutOfBoundsException e) {
            throw new SerializationException("truncated entity deltas on " + topic, e);
        }
    }

    private static void string(ByteBuffer out, byte[] utf8) {
        if (utf8.length > 0xFFFF) throw new SerializationException("string of " + utf8.length + " bytes is too long");
        out.putShort((short) utf8.length);
        out.put(utf8);
    }

    private static String string(ByteBuffer in) {
        int length = Short.toUnsignedInt(in.getShort());
        String s = new String(in.array(), in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        return s;
    }

    private static int amountSize(BigDecimal a) {
        if (a == null) return 1;
        return fitsLong(a) ? 1 + 8 : 1 + 1 + 2 + a.unscaledValue().toByteArray().length;
    }

    /**
     * Whether the unscaled value fits a long. Up to 18 digits it does, which {@code precision} tells without making the
     * BigInteger that {@code unscaledValue} makes of every decimal (it was a top frame of stage 3's commit).
     */
    private static boolean fitsLong(BigDecimal a) {
        return a.precision() <= 18 || a.unscaledValue().bitLength() < 64;
    }

    private static void amount(ByteBuffer out, BigDecimal a) {
        if (a == null) {
            out.put(ABSENT);
            return;
        }
        if (a.scale() < 0 || a.scale() > MAX_SCALE) throw new SerializationException("amount scale " + a.scale() + " out of range");
        if (fitsLong(a)) {
            out.put((byte) a.scale());
            out.putLong(a.precision() <= 18 ? unscaledLong(a) : a.unscaledValue().longValueExact());
        } else {
            out.put((byte) (a.scale() | BIG_AMOUNT));
            out.put((byte) 0); // reserved
            string(out, a.unscaledValue().toByteArray());
        }
    }

    /** The unscaled value of a decimal of at most 18 digits (so it fits a long). */
    private static long unscaledLong(BigDecimal d) {
        return d.scale() == 0 ? d.longValueExact() : d.scaleByPowerOfTen(d.scale()).longValueExact();
    }

    private static BigDecimal amount(ByteBuffer in) {
        byte flags = in.get();
        if (flags == ABSENT) return null;
        int scale = Byte.toUnsignedInt(flags);
        if ((scale & BIG_AMOUNT) == 0) return BigDecimal.valueOf(in.getLong(), scale);
        in.get();
        byte[] unscaled = new byte[Short.toUnsignedInt(in.getShort())];
        in.get(unscaled);
        return new BigDecimal(new BigInteger(unscaled), scale & ~BIG_AMOUNT);
    }
}
