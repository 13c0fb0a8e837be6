package io.tally.ingest.sink;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Which offsets may be committed: per partition, the end of the contiguous prefix of segments whose
 * writes are all durable (written, refused as stale, or dead-lettered). A segment is the run of one
 * partition's records in one window; it completes when its last write does, in any order.
 *
 * <p>Thread contract: {@link #register}, {@link #committable}, {@link #forget} run on the poll thread;
 * {@link Segment#complete()} on any thread (Reactor threads of the bulk writer). Methods are
 * synchronized; segments count down atomically.
 */
public final class OffsetTracker {

    /** One partition's records of one window: offsets up to {@code nextOffset - 1}. */
    public static final class Segment {
        final TopicPartition partition;
        final long nextOffset;
        private final AtomicInteger outstanding = new AtomicInteger();

        Segment(TopicPartition partition, long nextOffset) {
            this.partition = partition;
            this.nextOffset = nextOffset;
        }

        void add() { outstanding.incrementAndGet(); }

        /** One of its writes is durable. */
        void complete() { outstanding.decrementAndGet(); }

        boolean done() { return outstanding.get() <= 0; }
    }

    private final Map<TopicPartition, ArrayDeque<Segment>> pending = new HashMap<>();
    private final Map<TopicPartition, Long> committed = new HashMap<>();

    /** Segments are registered in offset order per partition. */
    public synchronized void register(Collection<Segment> segments) {
        for (Segment s : segments) pending.computeIfAbsent(s.partition, p -> new ArrayDeque<>()).add(s);
    }

    /** Offsets ahead of the last commit whose every earlier record is durable; marks them committed. */
    public synchronized Map<TopicPartition, OffsetAndMetadata> committable() {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        for (Map.Entry<TopicPartition, ArrayDeque<Segment>> e : pending.entrySet()) {
            long next = -1;
            ArrayDeque<Segment> q = e.getValue();
            while (!q.isEmpty() && q.peekFirst().done()) next = q.pollFirst().nextOffset;
            if (next >= 0 && next > committed.getOrDefault(e.getKey(), -1L)) {
                out.put(e.getKey(), new OffsetAndMetadata(next));
                committed.put(e.getKey(), next);
            }
        }
        return out;
    }

    /** Puts offsets back when their commit failed, so the next commit tries them again. */
    public synchronized void commitFailed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        offsets.keySet().forEach(committed::remove);
        offsets.forEach((tp, o) -> pending.computeIfAbsent(tp, p -> new ArrayDeque<>()).addFirst(new Segment(tp, o.offset())));
    }

    /** Segments not yet durable, over all partitions (for tests and metrics). */
    public synchronized int pendingSegments() {
        return pending.values().stream().mapToInt(ArrayDeque::size).sum();
    }

    /** The partitions are gone (revoked or lost): their state goes too. */
    public synchronized void forget(Collection<TopicPartition> partitions) {
        partitions.forEach(p -> { pending.remove(p); committed.remove(p); });
    }
}
