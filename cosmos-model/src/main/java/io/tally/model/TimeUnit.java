package io.tally.model;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * Bucket widths. A bucket index is the number of whole units since the Unix epoch in UTC, so the
 * same event always lands in the same bucket whichever process or replay computes it.
 */
public enum TimeUnit {
    MINUTE, HOUR, DAY, MONTH;

    private static final LocalDate EPOCH = LocalDate.of(1970, 1, 1);

    /** Kept, not derived per call: every bucket key and document id spells it. */
    private final String code = name().toLowerCase(Locale.ROOT);

    public long bucketIndex(Instant t) {
        return switch (this) {
            case MINUTE -> Math.floorDiv(t.getEpochSecond(), 60L);
            case HOUR -> Math.floorDiv(t.getEpochSecond(), 3600L);
            case DAY -> Math.floorDiv(t.getEpochSecond(), 86_400L);
            // Months differ in length: count calendar months, not seconds.
            case MONTH -> ChronoUnit.MONTHS.between(EPOCH, t.atZone(ZoneOffset.UTC).toLocalDate().withDayOfMonth(1));
        };
    }

    /** As {@link #bucketIndex(Instant)}, from milliseconds since the epoch (the per-event path: no Instant made). */
    public long bucketIndex(long epochMillis) {
        return switch (this) {
            case MINUTE -> Math.floorDiv(epochMillis, 60_000L);
            case HOUR -> Math.floorDiv(epochMillis, 3_600_000L);
            case DAY -> Math.floorDiv(epochMillis, 86_400_000L);
            case MONTH -> bucketIndex(Instant.ofEpochMilli(epochMillis));
        };
    }

    /** The first instant of the bucket with this index. */
    public Instant bucketStart(long index) {
        return switch (this) {
            case MINUTE -> Instant.ofEpochSecond(index * 60L);
            case HOUR -> Instant.ofEpochSecond(index * 3600L);
            case DAY -> Instant.ofEpochSecond(index * 86_400L);
            case MONTH -> ZonedDateTime.of(EPOCH.plusMonths(index).atStartOfDay(), ZoneOffset.UTC).toInstant();
        };
    }

    /** The lower-case name used in document ids and APIs: {@code hour}. */
    public String code() {
        return code;
    }

    public static TimeUnit fromCode(String code) {
        try {
            return valueOf(code.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown time unit '" + code + "' (expected minute, hour, day or month)");
        }
    }
}
