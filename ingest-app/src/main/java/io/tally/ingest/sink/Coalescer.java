package io.tally.ingest.sink;

import io.tally.ingest.topology.EntityBucketSerde;
import io.tally.model.EntityBucket;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucketJson;
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
 * <p>A window holds each bucket's newest update as the bytes it arrived in, with the key and {@code ver} read by a
 * streaming pass ({@link EntityBucketJson#header}); a closed window's writes stay bytes too, and {@link #decode}
 * decodes each as it is handed to the writer. In a backlog most updates are replaced within their window, and a
 * decoded document is several times its bytes on the heap, so a window of bytes can hold far more documents than may
 * be in flight. An update that is not JSON, or lacks its key or {@code ver}, is poison at once; one whose grades
 * cannot be decoded is poison when it is decoded: either way it goes to the DLQ through the writer, on this thread,
 * before anything after it in its partition can be committed.
 *
 * <p>Thread contract: poll thread only (not thread-safe).
 */
public final class Coalescer {

    /** A window ready to write: its writes and the segments they complete. */
    public record Window(List<BucketWrite> writes, List<OffsetTracker.Segment> segments, int records) {}

    /** Decodes a record's value; a failure message means the record is poison. */
    public interface Decoder extends Function<byte[], EntityBucket> {}

    /** The newest update of one bucket in the window, not decoded yet. */
    private static final class Pending {
        final String key;
        long ver;
        byte[] raw;
        long offset;
        int coalesced = 1;
        boolean create;

        Pending(String key, long ver, byte[] raw, long offset) {
            this.key = key;
            this.ver = ver;
            this.raw = raw;
            this.offset = offset;
        }
    }

    private final Decoder decoder;
    private final Map<TopicPartition, Map<String, Pending>> byPartition = new LinkedHashMap<>();
    private final Map<TopicPartition, Long> lastOffset = new HashMap<>();
    private final List<BucketWrite> poison = new ArrayList<>();
    private int records;
    private int documents;
    private long openedNanos;
    private long behindMillis = Long.MAX_VALUE;

    public Coalescer(Decoder decoder) {
        this.decoder = decoder;
    }

    public void add(ConsumerRecord<String, byte[]> r) {
        if (records == 0) openedNanos = System.nanoTime();
        records++;
        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
        lastOffset.put(tp, r.offset());
        if (r.timestamp() >= 0) behindMillis = Math.min(behindMillis, Math.max(0, System.currentTimeMillis() - r.timestamp()));
        if (r.value() == null) return; // a tombstone carries no bucket: nothing to write, the offset still counts
        EntityBucketJson.Header h;
        try {
            h = EntityBucketJson.header(r.value());
        } catch (RuntimeException e) {
            poison.add(poison(tp, r.key(), r.value(), r.offset(), e));
            return;
        }
        String key = r.key() != null ? r.key() : BucketKey.updateKey(h.pk(), h.id());
        Map<String, Pending> m = byPartition.computeIfAbsent(tp, p -> new LinkedHashMap<>());
        Pending existing = m.get(key);
        if (existing == null) {
            Pending p = new Pending(key, h.ver(), r.value(), r.offset());
            // A window's first update of a bucket decides: only the update that started the bucket carries the hint.
            p.create = r.headers().lastHeader(EntityBucketSerde.CREATED_HEADER) != null;
            m.put(key, p);
            documents++;
        } else {
            existing.coalesced++;
            if (h.ver() >= existing.ver) { // equal ver: the later record wins (same value by construction)
                existing.ver = h.ver();
                existing.raw = r.value();
                existing.offset = r.offset();
            }
        }
    }

    public int records() { return records; }

    public boolean isEmpty() { return records == 0; }

    /** Distinct writes the window would make now. */
    public int documents() {
        return poison.size() + documents;
    }

    public long ageNanos() { return records == 0 ? 0 : System.nanoTime() - openedNanos; }

    /**
     * How far behind the freshest update of the window was when it was read: its record's age (the time since the
     * aggregation's input record was produced, which the update carries as its timestamp). Long.MAX_VALUE while the
     * window holds no timestamped record.
     */
    public long behindMillis() { return behindMillis; }

    /**
     * Closes the window: one write per bucket (its newest update, not decoded yet: see {@link #decode}) or poison
     * record, one segment per partition, each write bound to its segment.
     */
    public Window drain() {
        Map<TopicPartition, OffsetTracker.Segment> segments = new LinkedHashMap<>();
        lastOffset.forEach((tp, off) -> segments.put(tp, new OffsetTracker.Segment(tp, off + 1)));
        List<BucketWrite> writes = new ArrayList<>(documents());
        byPartition.forEach((tp, m) -> m.values().forEach(p -> writes.add(bind(pending(tp, p), segments))));
        poison.forEach(w -> writes.add(bind(w, segments)));
        Window window = new Window(writes, new ArrayList<>(segments.values()), records);
        byPartition.clear();
        lastOffset.clear();
        poison.clear();
        records = 0;
        documents = 0;
        behindMillis = Long.MAX_VALUE;
        return window;
    }

    private static BucketWrite pending(TopicPartition tp, Pending p) {
        BucketWrite w = new BucketWrite(tp, p.key, null, p.raw, p.offset, null);
        if (p.create) w.kind = WriteKind.CREATE;
        w.coalesced = p.coalesced;
        return w;
    }

    /**
     * Decodes a drained write's document, once; a document that cannot be decoded makes the write poison (the writer
     * dead-letters it). Returns the write.
     */
    public BucketWrite decode(BucketWrite w) {
        if (w.doc != null || w.poison != null || w.raw == null) return w;
        try {
            w.doc = decoder.apply(w.raw);
        } catch (RuntimeException e) {
            w.poison = String.valueOf(e.getMessage());
        }
        return w;
    }

    private static BucketWrite poison(TopicPartition tp, String key, byte[] raw, long offset, RuntimeException e) {
        BucketWrite w = new BucketWrite(tp, key, null, raw, offset, null);
        w.poison = String.valueOf(e.getMessage());
        return w;
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
            Map<String, Pending> m = byPartition.remove(tp);
            if (m != null) {
                m.values().forEach(p -> records -= p.coalesced);
                documents -= m.size();
            }
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
