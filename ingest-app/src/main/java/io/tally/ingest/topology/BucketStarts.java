package io.tally.ingest.topology;

import io.tally.model.TimeUnit;

/**
 * ISO start of a bucket, remembering the last one per unit: consecutive events mostly share their
 * buckets, and formatting an instant costs more than the rest of a new bucket. One per processor (not
 * thread-safe).
 */
public final class BucketStarts {
    private final long[] lastIndex = new long[TimeUnit.values().length];
    private final String[] lastStart = new String[TimeUnit.values().length];

    public String isoStart(TimeUnit unit, long index) {
        int u = unit.ordinal();
        if (lastIndex[u] != index || lastStart[u] == null) {
            lastIndex[u] = index;
            lastStart[u] = unit.bucketStart(index).toString();
        }
        return lastStart[u];
    }
}
