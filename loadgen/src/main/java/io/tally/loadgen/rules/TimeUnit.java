package io.tally.loadgen.rules;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Locale;

/**
 * Bucket widths and their indexes: whole units since 1970-01-01T00:00Z. Written here again on purpose
 * (cosmos-model has its own): the ground truth must not share code with the pipeline it checks.
 */
public enum TimeUnit {
    MINUTE, HOUR, DAY, MONTH;

    private final String code = name().toLowerCase(Locale.ROOT);

    public long index(Instant t) {
        return switch (this) {
            case MINUTE -> Math.floorDiv(t.getEpochSecond(), 60);
            case HOUR -> Math.floorDiv(t.getEpochSecond(), 3_600);
            case DAY -> Math.floorDiv(t.getEpochSecond(), 86_400);
            case MONTH -> {
                ZonedDateTime z = t.atZone(ZoneOffset.UTC);
                yield (z.getYear() - 1970L) * 12 + (z.getMonthValue() - 1); // calendar months, not 30-day blocks
            }
        };
    }

    /** The name in documents and rule files: {@code hour}. */
    public String code() {
        return code;
    }
}
