package io.tally.ingest.topology;

import java.time.Duration;

/**
 * Stage 2's rule, shared by the live topology and replay: a record whose transaction id was first seen
 * (on the same input partition) within the horizon of it, by record timestamp, is a duplicate.
 *
 * <p>The live store files each first sighting under the start of its cell, a slot one horizon wide, so
 * a check is a few point lookups (the cells that can hold a sighting within the horizon: three)
 * instead of a range scan, and expiry drops whole segments of old cells without reading them. The
 * exact first-seen timestamp is stored with it, so the decision is the same as replay's.
 */
public final class DedupeRule {
    private final long horizonMs;

    public DedupeRule(Duration horizon) {
        if (horizon.isNegative() || horizon.isZero()) throw new IllegalArgumentException("dedupe horizon must be positive");
        this.horizonMs = horizon.toMillis();
    }

    public boolean isDuplicate(long firstSeenMs, long timestampMs) {
        return Math.abs(timestampMs - firstSeenMs) <= horizonMs;
    }

    /** The cell a sighting at this timestamp is filed under. */
    public long cellStart(long timestampMs) {
        return Math.floorDiv(timestampMs, horizonMs) * horizonMs;
    }

    /** First and last cell that can hold a sighting within the horizon of this timestamp. */
    public long firstCell(long timestampMs) {
        return cellStart(timestampMs - horizonMs);
    }

    public long lastCell(long timestampMs) {
        return cellStart(timestampMs + horizonMs);
    }

    public long cellWidthMs() {
        return horizonMs;
    }

    /**
     * How long the store keeps a cell: a sighting filed up to one cell before its timestamp must still be
     * there a horizon later, so two horizons.
     */
    public Duration retention() {
        return Duration.ofMillis(2 * horizonMs);
    }
}
