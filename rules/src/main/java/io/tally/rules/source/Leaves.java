package io.tally.rules.source;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Set;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericFixed;

/**
 * How the value a path ends on becomes what Tally needs, chosen once per writer schema from the value's type: a key
 * (entity, qualifier, filter value, transaction id, domain), an event time, or an amount. A type that cannot serve
 * its use is refused when the schema is first seen, naming the type; a value that cannot (an unparseable time
 * string) is refused per event.
 */
final class Leaves {
    /** Values that become keys: their text is the key. */
    private static final Set<Schema.Type> KEY_TYPES =
            Set.of(Schema.Type.STRING, Schema.Type.ENUM, Schema.Type.INT, Schema.Type.LONG, Schema.Type.BOOLEAN);

    interface Text {
        String read(Object raw);
    }

    interface Time {
        /** Milliseconds since the epoch; {@link IllegalArgumentException} when the value is no time. */
        long millis(Object raw);
    }

    interface Amount {
        /** The exact amount; {@link ArithmeticException} or {@link NumberFormatException} when it has none. */
        BigDecimal read(Object raw);
    }

    private Leaves() {}

    static Text text(Schema leaf) throws SchemaPaths.Unresolved {
        List<Schema> types = leaf.getType() == Schema.Type.UNION
                ? leaf.getTypes().stream().filter(t -> t.getType() != Schema.Type.NULL).toList() : List.of(leaf);
        for (Schema t : types) {
            if (!KEY_TYPES.contains(t.getType())) {
                throw new SchemaPaths.Unresolved("it is " + describe(leaf) + ", not a string, enum, int, long or boolean");
            }
        }
        // Utf8, String, enum symbols, boxed numbers and booleans all print as the key they stand for.
        return Object::toString;
    }

    static Time time(Schema leaf) throws SchemaPaths.Unresolved {
        LogicalType logical = leaf.getLogicalType();
        switch (leaf.getType()) {
            case LONG -> {
                if (logical == null || logical instanceof LogicalTypes.TimestampMillis) {
                    return raw -> raw instanceof Instant i ? i.toEpochMilli() : (Long) raw;
                }
                if (logical instanceof LogicalTypes.TimestampMicros) {
                    return raw -> raw instanceof Instant i ? i.toEpochMilli() : Math.floorDiv((Long) raw, 1000L);
                }
                throw new SchemaPaths.Unresolved("it is a long of logical type " + logical.getName()
                        + ", not an instant (timestamp-millis or timestamp-micros)");
            }
            case STRING -> {
                return raw -> {
                    String s = raw.toString();
                    try {
                        return DateTimeFormatter.ISO_OFFSET_DATE_TIME.parse(s, Instant::from).toEpochMilli();
                    } catch (DateTimeParseException e) {
                        throw new IllegalArgumentException("'" + s + "' is not an ISO-8601 instant with an offset, "
                                + "such as 2026-11-27T08:15:30.123Z");
                    }
                };
            }
            default -> throw new SchemaPaths.Unresolved("it is " + describe(leaf)
                    + ", not a timestamp-millis or timestamp-micros long or an ISO-8601 string");
        }
    }

    static Amount amount(Schema leaf, SourceMapping.Amount mapping) throws SchemaPaths.Unresolved {
        LogicalType logical = leaf.getLogicalType();
        switch (leaf.getType()) {
            case BYTES, FIXED -> {
                if (!(logical instanceof LogicalTypes.Decimal d)) {
                    throw new SchemaPaths.Unresolved("it is " + describe(leaf) + " without the decimal logical type");
                }
                if (mapping.scale() != null) {
                    throw new SchemaPaths.Unresolved("it is a decimal with its own scale " + d.getScale() + "; remove amount.scale");
                }
                int scale = d.getScale();
                return raw -> {
                    if (raw instanceof BigDecimal b) return b;
                    byte[] bytes;
                    if (raw instanceof ByteBuffer buf) {
                        bytes = new byte[buf.remaining()];
                        buf.duplicate().get(bytes);
                    } else {
                        bytes = ((GenericFixed) raw).bytes();
                    }
                    return new BigDecimal(new BigInteger(bytes), scale);
                };
            }
            case INT, LONG -> {
                if (mapping.scale() == null) {
                    throw new SchemaPaths.Unresolved("it is " + describe(leaf) + " of minor units: say how many, as "
                            + "amount: {path: " + mapping.path() + ", scale: 2} for cents (scale: 0 for whole units)");
                }
                int scale = mapping.scale();
                return raw -> BigDecimal.valueOf(((Number) raw).longValue(), scale);
            }
            case FLOAT, DOUBLE -> {
                if (!mapping.allowDouble()) {
                    throw new SchemaPaths.Unresolved("it is a " + leaf.getType().getName() + ", which does not hold amounts exactly; "
                            + "use a decimal or a long of minor units, or accept it with amount.double: allow");
                }
                int scale = mapping.scale() == null ? 0 : mapping.scale();
                // A float widened to double carries its binary error into the digits (0.1f reads 0.10000000149011612);
                // the float's own shortest decimal is the value the producer wrote.
                return raw -> {
                    double d = ((Number) raw).doubleValue();
                    if (!Double.isFinite(d)) throw new NumberFormatException("not a finite number");
                    return (raw instanceof Float f ? new BigDecimal(Float.toString(f)) : BigDecimal.valueOf(d)).movePointLeft(scale);
                };
            }
            default -> throw new SchemaPaths.Unresolved("it is " + describe(leaf) + ", not a decimal, int, long or (allowed) double");
        }
    }

    static String describe(Schema s) {
        if (s.getType() == Schema.Type.UNION) return "a union of " + s.getTypes().stream().map(t -> t.getType().getName()).toList();
        String logical = s.getLogicalType() == null ? "" : " (" + s.getLogicalType().getName() + ")";
        String name = s.getType() == Schema.Type.RECORD || s.getType() == Schema.Type.ENUM || s.getType() == Schema.Type.FIXED
                ? " " + s.getFullName() : "";
        String type = s.getType().getName();
        return ("aeiou".indexOf(type.charAt(0)) >= 0 ? "an " : "a ") + type + name + logical;
    }
}
