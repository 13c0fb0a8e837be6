package io.tally.loadgen;

import java.time.Duration;

/**
 * When each generated record is due, relative to the first send: a base rate with one optional burst
 * (factor x the base rate from {@code burstStart} for {@code burstDuration}). A pure function of the
 * record's sequence number, so pacing never depends on how fast earlier records were acknowledged:
 * a run that falls behind catches up instead of stretching.
 *
 * <p>Immutable and thread-safe.
 */
public record RateSchedule(long ratePerSecond, int burstFactor, Duration burstStart, Duration burstDuration) {

    public static RateSchedule of(LoadgenSettings s) {
        return new RateSchedule(s.rate(), s.burstFactor(), s.burstStart(), s.burstDuration());
    }

    /** No pacing: every record is due at once. */
    public boolean unpaced() {
        return ratePerSecond == 0;
    }

    /** Nanoseconds after the start at which record {@code sequence} (0-based) is due. */
    public long dueNanos(long sequence) {
        if (unpaced()) return 0;
        double r = ratePerSecond;
        double beforeBurst = r * seconds(burstStart);            // records sent before the burst begins
        double inBurst = r * burstFactor * seconds(burstDuration); // records sent during the burst
        double t;
        if (burstFactor == 1 || sequence < beforeBurst) {
            t = sequence / r;
        } else if (sequence < beforeBurst + inBurst) {
            t = seconds(burstStart) + (sequence - beforeBurst) / (r * burstFactor);
        } else {
            t = seconds(burstStart) + seconds(burstDuration) + (sequence - beforeBurst - inBurst) / r;
        }
        return (long) (t * 1e9);
    }

    /** How many records are due within {@code d}: the integral of the rate over [0, d). */
    public long recordsWithin(Duration d) {
        double total = seconds(d);
        double r = ratePerSecond;
        double bs = seconds(burstStart), bd = burstFactor == 1 ? 0 : seconds(burstDuration);
        double before = Math.min(total, bs);
        double during = Math.max(0, Math.min(total, bs + bd) - bs);
        double after = Math.max(0, total - bs - bd);
        return (long) Math.floor(r * before + r * burstFactor * during + r * after);
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}
