package io.tally.schemas.serde;

import org.apache.avro.Conversions;
import org.apache.avro.data.TimeConversions;
import org.apache.avro.generic.GenericData;

/** The GenericData instances the serde uses; both are immutable after class initialisation and thread-safe. */
final class AvroModels {
    /** Raw Avro types: decimal as ByteBuffer, timestamp-millis as Long (Confluent's default for generic records). */
    static final GenericData RAW = new GenericData();

    /**
     * Java types for logical types (BigDecimal, Instant, LocalDate, UUID). Writers accept both: Avro picks a
     * conversion by the value's class, so a ByteBuffer or Long still goes out raw.
     */
    static final GenericData WITH_CONVERSIONS = new GenericData();

    static {
        WITH_CONVERSIONS.addLogicalTypeConversion(new Conversions.DecimalConversion());
        WITH_CONVERSIONS.addLogicalTypeConversion(new Conversions.UUIDConversion());
        WITH_CONVERSIONS.addLogicalTypeConversion(new TimeConversions.DateConversion());
        WITH_CONVERSIONS.addLogicalTypeConversion(new TimeConversions.TimeMillisConversion());
        WITH_CONVERSIONS.addLogicalTypeConversion(new TimeConversions.TimeMicrosConversion());
        WITH_CONVERSIONS.addLogicalTypeConversion(new TimeConversions.TimestampMillisConversion());
        WITH_CONVERSIONS.addLogicalTypeConversion(new TimeConversions.TimestampMicrosConversion());
        WITH_CONVERSIONS.addLogicalTypeConversion(new TimeConversions.LocalTimestampMillisConversion());
        WITH_CONVERSIONS.addLogicalTypeConversion(new TimeConversions.LocalTimestampMicrosConversion());
    }

    private AvroModels() {}
}
