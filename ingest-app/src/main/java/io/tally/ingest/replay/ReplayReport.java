package io.tally.ingest.replay;

import io.tally.schemas.DeadLetters;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one replay did. Rejected records are counted by reason only: the live run already dead-lettered them.
 *
 * @param recordsToRead  sum over partitions of (captured end offset - start offset); transaction markers included
 * @param accepted       records that decoded and passed validation, inside the range or not
 * @param outsideRange   accepted events whose event time is outside the range
 * @param computed       buckets wholly inside the range, recomputed
 * @param skippedAtBounds buckets the range's events touch that reach beyond the range, not written
 */
public record ReplayReport(String container, ReplayRange range, String applicationId, int partitions, long recordsToRead,
                           long recordsRead, long accepted, Map<DeadLetters.Reason, Long> rejected, long duplicates,
                           long outsideRange, long computed, long skippedAtBounds, WriteTotals writes, Duration elapsed) {

    public boolean complete() {
        return writes.refused() == 0 && writes.incomplete() == 0;
    }

    public int exitCode() {
        return complete() ? ReplayJob.EXIT_OK : ReplayJob.EXIT_FAILED;
    }

    public long written() { return writes.written(); }

    public long unchanged() { return writes.unchanged(); }

    public long refused() { return writes.refused(); }

    public long incomplete() { return writes.incomplete(); }

    public String format() {
        StringBuilder sb = new StringBuilder();
        sb.append(complete() ? "replay finished" : "replay did NOT finish").append(": range ").append(range)
                .append(" into container ").append(container).append(" (").append(applicationId).append(")\n");
        line(sb, "partitions", partitions);
        line(sb, "records read", recordsRead + " of " + recordsToRead + " to read");
        line(sb, "accepted", accepted + " (" + outsideRange + " outside the range)");
        long rejectedTotal = rejected.values().stream().mapToLong(Long::longValue).sum();
        line(sb, "rejected", rejectedTotal + (rejected.isEmpty() ? "" : " " + new TreeMap<>(rejected))
                + " (already dead-lettered by the live run; not sent again)");
        line(sb, "duplicates", duplicates);
        line(sb, "buckets computed", computed);
        line(sb, "written", writes.written());
        line(sb, "unchanged", writes.unchanged() + " (stored ver already as high)");
        line(sb, "skipped at bounds", skippedAtBounds + " (buckets reaching beyond the range)");
        if (writes.refused() > 0) line(sb, "refused", writes.refused() + " by Cosmos for good, e.g. " + writes.refusals());
        if (writes.incomplete() > 0) line(sb, "not written", writes.incomplete() + " still failing when replay.write-timeout.ms ran out");
        line(sb, "request units", String.format(Locale.ROOT, "%.1f", writes.requestUnits()));
        line(sb, "elapsed", ReplayProgress.hms(elapsed.toSeconds()) + String.format(Locale.ROOT, " (%.1f s)", elapsed.toMillis() / 1000.0));
        return sb.toString();
    }

    private static void line(StringBuilder sb, String label, Object value) {
        sb.append(String.format(Locale.ROOT, "  %-18s %s%n", label, value));
    }
}
