package io.tally.ingest.topology;

import io.tally.model.TimeUnit;
import io.tally.model.Aggregate;
import java.math.BigDecimal;
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
    private record Bucket(String rule, String qualifier, TimeUnit unit, long bucketIndex) {}

    /** A bucket's deltas so far: the first one, and the running count, sum, min and max, updated in place. */
    private static final class Combined {
        final EntityDeltas.Delta first;
        long count;
        BigDecimal sum, min, max;

        Combined(EntityDeltas.Delta first) {
            this.first = first;
            this.count = first.count();
            this.sum = first.sum();
            this.min = first.min();
            this.max = first.max();
        }

        void add(EntityDeltas.Delta later) {
            count += later.count();
            sum = Aggregate.sum(sum, later.sum());
            min = Aggregate.min(min, later.min());
            max = Aggregate.max(max, later.max());
        }

        /** The same delta {@link EntityDeltas.Delta#plus} gives, made once per bucket instead of once per event. */
        EntityDeltas.Delta delta() {
            return count == first.count() ? first : new EntityDeltas.Delta(first.rule(), first.qualifier(), first.unit(), first.bucketIndex(),
                    first.aggregations(), first.ttlSeconds(), count, sum, min, max);
        }
    }

    private final Map<String, Map<Bucket, Combined>> byPk = new LinkedHashMap<>();
    private int size;
    private long timestamp = Long.MIN_VALUE;
    /** The rules generation of what waits: one fan-out's, so one for all. */
    private long generation;

    /** Adds one event's deltas for a pk, stamped with its record timestamp. */
    void add(EntityDeltas bundle, long recordTimestamp) {
        Map<Bucket, Combined> buckets = byPk.computeIfAbsent(bundle.pk(), pk -> new HashMap<>(8));
        for (EntityDeltas.Delta d : bundle.deltas()) {
            Bucket key = new Bucket(d.rule(), d.qualifier(), d.unit(), d.bucketIndex());
            Combined combined = buckets.get(key);
            if (combined == null) {
                buckets.put(key, new Combined(d));
                size++;
            } else {
                combined.add(d);
            }
        }
        timestamp = Math.max(timestamp, recordTimestamp);
        generation = bundle.generation();
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

    /** Drops everything waiting (deltas of an aborted transaction). */
    void discard() {
        byPk.clear();
        size = 0;
        timestamp = Long.MIN_VALUE;
    }

    /** Everything waiting, one bundle per pk in the order pks were first seen; leaves this empty. */
    List<EntityDeltas> drain() {
        List<EntityDeltas> out = new ArrayList<>(byPk.size());
        byPk.forEach((pk, buckets) -> {
            List<EntityDeltas.Delta> deltas = new ArrayList<>(buckets.size());
            for (Combined c : buckets.values()) deltas.add(c.delta());
            out.add(new EntityDeltas(pk, deltas, generation));
        });
        discard();
        return out;
    }
}
