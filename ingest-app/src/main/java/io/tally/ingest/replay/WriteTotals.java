package io.tally.ingest.replay;

import java.util.List;

/**
 * What happened to a replay's writes.
 *
 * @param unchanged    refused as stale: the stored {@code ver} was already as high (412)
 * @param refused      refused by Cosmos for good (400/413/422); {@code refusals} names the first few
 * @param incomplete   still failing when {@code replay.write-timeout.ms} ran out
 * @param requestUnits RU charged, retries included
 */
public record WriteTotals(long written, long unchanged, long refused, long incomplete, double requestUnits, List<String> refusals) {}
