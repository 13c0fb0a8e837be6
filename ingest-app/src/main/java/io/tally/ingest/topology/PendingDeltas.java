package io.tally.ingest.topology;

import io.tally.model.TimeUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Deltas waiting for the next commit, combined per bucket: a bucket that a hundred events touch between
 * two commits crosses the repartition topic once, as one delta of count 100, inside one record per pk.
 * Combining is exact (sums of decimals, min, max, counts), so stage 5 ends with the same values and the
 * same {@code ver} as if every event had gone through alone.
 *
 * <p>Not thread-safe: one stream task's processor owns it.
 */
final class PendingDeltas {
    private record Bucket(String grade, TimeUnit unit, long bucketIndex) {}

    private final Map<String, Map<Bucket, EntityDeltas.Delta>> byPk = new LinkedHashMap<>();
    private int size;
    private long timestamp = Long.MIN_VALUE;

    /** Adds one event's deltas for a pk, stamped with its record timestamp. */
    void add(EntityDeltas bundle, long recordTimestamp) {
        Map<Bucket, EntityDeltas.Delta> buckets = byPk.computeIfAbsent(bundle.pk(), pk -> new HashMap<>(8));
        for (EntityDeltas.Delta d : bundle.deltas()) {
            // merge hands back d itself only when the bucket was absent: plus always makes a new delta.
            if (buckets.merge(new Bucket(d.grade(), d.unit(), d.bucketIndex()), d, EntityDeltas.Delta::plus) == d) size++;
        }
        timestamp = Math.max(timestamp, recordTimestamp);
    }

    /** Distinct buckets waiting. */
    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The newest record timestamp among the events waiting: the timestamp of what {@link #drain} returns. */
    long timestamp() {
        return timestamp;
    }

    /** Everything waiting, one bundle per pk in the order pks were first seen; leaves this empty. */
    List<EntityDeltas> drain() {
        List<EntityDeltas> out = new ArrayList<>(byPk.size());
        byPk.forEach((pk, buckets) -> out.add(new EntityDeltas(pk, new ArrayList<>(buckets.values()))));
        byPk.clear();
        size = 0;
        timestamp = Long.MIN_VALUE;
        return out;
    }
}
