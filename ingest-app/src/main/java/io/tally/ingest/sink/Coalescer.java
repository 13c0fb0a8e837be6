package io.tally.ingest.sink;

import io.tally.ingest.topology.EntityBucketSerde;
import io.tally.model.EntityBucket;
import io.tally.model.BucketKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Stage 7: keeps only the newest version of each bucket within one window. Values are absolute, so
 * the newest {@code ver} carries everything older ones did; the older updates' offsets ride along and
 * become committable when the newest is durable.
 *
 * <p>Thread contract: poll thread only (not thread-safe).
 */
public final class Coalescer {

    /** A window ready to write: its writes and the segments they complete. */
    public record Window(List<BucketWrite> writes, List<OffsetTracker.Segment> segments, int records) {}

    /** Decodes a record's value; a failure message means the record is poison. */
    public interface Decoder extends Function<byte[], EntityBucket> {}

    private final Decoder decoder;
    private final Map<TopicPartition, Map<String, BucketWrite>> byPartition = new LinkedHashMap<>();
    private final Map<TopicPartition, Long> lastOffset = new HashMap<>();
    private final List<BucketWrite> poison = new ArrayList<>();
    private int records;
    private long openedNanos;

    public Coalescer(Decoder decoder) {
        this.decoder = decoder;
    }

    public void add(ConsumerRecord<String, byte[]> r) {
        if (records == 0) openedNanos = System.nanoTime();
        records++;
        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
        lastOffset.put(tp, r.offset());
        if (r.value() == null) return; // a tombstone carries no bucket: nothing to write, the offset still counts
        EntityBucket doc;
        try {
            doc = decoder.apply(r.value());
        } catch (RuntimeException e) {
            BucketWrite w = new BucketWrite(tp, r.key(), null, r.value(), r.offset(), null);
            w.poison = String.valueOf(e.getMessage());
            poison.add(w);
            return;
        }
        String key = r.key() != null ? r.key() : BucketKey.updateKey(doc.pk(), doc.id());
        Map<String, BucketWrite> m = byPartition.computeIfAbsent(tp, p -> new LinkedHashMap<>());
        BucketWrite existing = m.get(key);
        if (existing == null) {
            BucketWrite w = new BucketWrite(tp, key, doc, r.value(), r.offset(), null);
            // A window's first update of a bucket decides: only the update that started the bucket carries the hint.
            if (r.headers().lastHeader(EntityBucketSerde.CREATED_HEADER) != null) w.kind = WriteKind.CREATE;
            m.put(key, w);
        } else {
            existing.coalesced++;
            if (doc.ver() >= existing.doc.ver()) { // equal ver: the later record wins (same value by construction)
                existing.doc = doc;
                existing.raw = r.value();
                existing.offset = r.offset();
            }
        }
    }

    public int records() { return records; }

    public boolean isEmpty() { return records == 0; }

    /** Distinct writes the window would make now. */
    public int documents() {
        return poison.size() + byPartition.values().stream().mapToInt(Map::size).sum();
    }

    public long ageNanos() { return records == 0 ? 0 : System.nanoTime() - openedNanos; }

    /** Closes the window: one segment per partition, each write bound to its segment. */
    public Window drain() {
        Map<TopicPartition, OffsetTracker.Segment> segments = new LinkedHashMap<>();
        lastOffset.forEach((tp, off) -> segments.put(tp, new OffsetTracker.Segment(tp, off + 1)));
        List<BucketWrite> writes = new ArrayList<>(documents());
        byPartition.values().forEach(m -> m.values().forEach(w -> writes.add(bind(w, segments))));
        poison.forEach(w -> writes.add(bind(w, segments)));
        Window window = new Window(writes, new ArrayList<>(segments.values()), records);
        byPartition.clear();
        lastOffset.clear();
        poison.clear();
        records = 0;
        return window;
    }

    private static BucketWrite bind(BucketWrite w, Map<TopicPartition, OffsetTracker.Segment> segments) {
        OffsetTracker.Segment s = segments.get(w.partition);
        s.add();
        BucketWrite bound = new BucketWrite(w.partition, w.key, w.doc, w.raw, w.offset, s);
        bound.coalesced = w.coalesced;
        bound.poison = w.poison;
        bound.kind = w.kind;
        return bound;
    }

    /** Forgets the not yet written updates of partitions this instance no longer owns. */
    public void drop(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            Map<String, BucketWrite> m = byPartition.remove(tp);
            if (m != null) m.values().forEach(w -> records -= w.coalesced);
            if (lastOffset.remove(tp) != null && m == null) records = Math.max(records, 0);
        }
        poison.removeIf(w -> {
            boolean gone = partitions.contains(w.partition);
            if (gone) records--;
            return gone;
        });
        if (byPartition.isEmpty() && poison.isEmpty() && lastOffset.isEmpty()) records = 0;
        records = Math.max(records, 0);
    }
}
