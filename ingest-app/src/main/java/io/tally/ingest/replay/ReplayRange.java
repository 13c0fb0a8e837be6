package io.tally.ingest.replay;

import io.tally.model.TimeUnit;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;

/**
 * The event-time range {@code [from, to)} a replay rebuilds. Only buckets wholly inside it are
 * written: a bucket that starts before {@code from} or ends after {@code to} also holds events the
 * replay does not read, so its recomputed value would be partial.
 */
public record ReplayRange(Instant from, Instant to) {

    public ReplayRange {
        if (!from.isBefore(to)) {
            throw new IllegalArgumentException("the range is empty: --from " + from + " must be before --to " + to);
        }
    }

    /**
     * Checks {@code to} against the clock. A {@code to} in the future is always refused. Events may arrive
     * up to {@code lateBound} after their event time, so a bucket ending after {@code now - lateBound} can
     * still change; such buckets are rebuilt only when {@code includeOpen} says the caller knows.
     */
    public static ReplayRange of(Instant from, Instant to, Instant now, Duration lateBound, boolean includeOpen) {
        ReplayRange range = new ReplayRange(from, to);
        if (to.isAfter(now)) {
            throw new IllegalArgumentException("--to " + to + " is in the future (now is " + now.truncatedTo(ChronoUnit.SECONDS) + ")");
        }
        Instant settled = settledBefore(now, lateBound);
        if (!includeOpen && to.isAfter(settled)) {
            throw new IllegalArgumentException("--to " + to + " is later than " + settled + " (now minus ingest.late-bound.ms = "
                    + lateBound + "): buckets ending after that can still receive late events. Choose --to " + settled
                    + " or earlier, or pass --include-open-buckets to rebuild them as of now (the live run keeps updating them).");
        }
        return range;
    }

    /** Buckets ending at or before this instant no longer change: every event for them is older than the late bound. */
    public static Instant settledBefore(Instant now, Duration lateBound) {
        return now.minus(lateBound).truncatedTo(ChronoUnit.SECONDS);
    }

    public boolean contains(Instant eventTime) {
        return !eventTime.isBefore(from) && eventTime.isBefore(to);
    }

    /** True when the bucket {@code index} of {@code unit} lies wholly inside the range. */
    public boolean containsBucket(TimeUnit unit, long index) {
        return !unit.bucketStart(index).isBefore(from) && !unit.bucketStart(index + 1).isAfter(to);
    }

    /**
     * Parses a time bound: an ISO instant ({@code 2026-11-20T00:00:00Z}), an ISO date-time with offset
     * ({@code 2026-11-20T01:00:00+01:00}) or a date ({@code 2026-11-20}, midnight UTC).
     */
    public static Instant parseTime(String flag, String text) {
        String t = text.trim();
        try {
            if (t.length() == 10) return LocalDate.parse(t).atStartOfDay(ZoneOffset.UTC).toInstant();
            return OffsetDateTime.parse(t).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("--" + flag + " '" + text + "' is not a time: use an ISO instant (2026-11-20T00:00:00Z), "
                    + "a date-time with offset (2026-11-20T01:00:00+01:00) or a date (2026-11-20, midnight UTC)");
        }
    }

    @Override
    public String toString() {
        return "[" + from + ", " + to + ")";
    }
}
