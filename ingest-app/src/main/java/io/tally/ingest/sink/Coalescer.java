package io.tally.ingest.sink;

import io.tally.ingest.topology.EntityBucketSerde;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucketJson;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Stage 7: keeps only the newest version of each bucket until it is written. Values are absolute, so the newest
 * {@code ver} carries everything older ones did; the older updates' offsets ride along and become committable when
 * the newest is durable.
 *
 * <p><b>How long a bucket waits.</b> Each bucket has a hold, from how far behind its freshest waiting update was when
 * it was read (the update's record timestamp: when the event it counts was produced): an update that keeps up is
 * written at once, or a flush window after its bucket's last write when that was within one (a bucket is written at
 * most once per window, and a quiet one does not wait for busy ones), one that is far behind waits about as long again as it is behind, up
 * to {@code sink.backlog.max-window.ms}, and while the whole stream is behind, {@code sink.backlog.catch-up-window.ms}
 * ({@link Holds}). The hold is the bucket's, not the window's, so in one stream:
 * <ul>
 *   <li>live updates are written within the freshness target while a backfill's or a backlog's updates keep
 *       coalescing beside them, and a window's fresh writes are handed over before its behind ones (live first);
 *   <li>draining a backlog, a busy document is written once per hold instead of once per flush window, which is what
 *       brings a drain's writes close to one per document;
 *   <li>a live update of a bucket that waits behind makes it fresh: it is written at the next close.
 * </ul>
 * A bucket that waits past a close is carried to the next; its write then completes the segment of the close it was
 * first carried past (its "owed" segment), so no offset is committed before every update it read is durable
 * ({@link OffsetTracker} commits segments in order). When the coalescer holds {@code sink.window.max-documents}, or
 * {@code sink.window.max-bytes} of heap ({@link #bytes}), the buckets updated least recently are written first (they
 * are the least likely to change again) until half of each is left.
 *
 * <p>Each waiting update is kept as the bytes it arrived in, with the key and {@code ver} read by a streaming pass
 * ({@link EntityBucketJson#header}); a closed window's writes stay bytes too, and {@link #decode} decodes each as it
 * is handed to the writer. An update that is not JSON, or lacks its key or {@code ver}, is poison at once; one whose
 * grades cannot be decoded is poison when it is decoded: either way it goes to the DLQ through the writer, on this
 * thread, before anything after it in its partition can be committed.
 *
 * <p>Thread contract: poll thread only (not thread-safe).
 */
public final class Coalescer {

    /** A closed window: its writes (fresh ones first) and the segments registered at its close. */
    public record Window(List<BucketWrite> writes, List<OffsetTracker.Segment> segments, int records) {}

    /** Decodes a record's value ({@link EntityBucketJson#parts}); a failure message means the record is poison. */
    public interface Decoder extends Function<byte[], EntityBucketJson.Parts> {}

    /**
     * How long an update may wait, from how far behind it is: the flush window while it is no further behind than
     * {@code keepingUp} (such an update is fresh: written at once, or a flush window after its bucket's last write when
     * that was within one); further behind, as long as it is behind beyond that, at least the flush window and at most
     * {@code backlogMax} (which, at or below the flush window, turns holds off). Continuous at {@code keepingUp}, so an
     * update only a little late is not held: the freshness target's tail stays where it was. Far behind, an update's
     * lag at most doubles. While the whole stream is behind a late bucket waits at least {@code catchUp} instead
     * ({@link #streamBehind}), so draining a backlog writes a busy document about once per {@code catchUp}; beside
     * fresh updates (a backfill beside live) the bound stays {@code backlogMax}, so what the backfill writes is
     * durable within that of its last update. A stream that sends nothing for {@code quiet} has gone quiet (the end of a
     * backlog, not a pause between the aggregation's commits), or longer once a drain has shown longer pauses
     * ({@link Coalescer#quietNanos}).
     */
    public record Holds(Duration flush, Duration keepingUp, Duration backlogMax, Duration catchUp, Duration quiet) {
        /** Every update is due at the next close: a coalescer of one window at a time. */
        public static final Holds NONE = new Holds(Duration.ZERO, Duration.ZERO, Duration.ZERO);

        /** While the whole stream is behind, a late bucket waits the same bound as on its own. */
        public Holds(Duration flush, Duration keepingUp, Duration backlogMax) {
            this(flush, keepingUp, backlogMax, backlogMax);
        }

        /** A stream that pauses for {@code keepingUp} has gone quiet. */
        public Holds(Duration flush, Duration keepingUp, Duration backlogMax, Duration catchUp) {
            this(flush, keepingUp, backlogMax, catchUp, keepingUp);
        }

        public long nanos(long behindMillis) {
            long flushNanos = flush.toNanos();
            if (backlogMax.compareTo(flush) <= 0 || behindMillis == Long.MAX_VALUE || behindMillis <= keepingUp.toMillis()) return flushNanos;
            long late = TimeUnit.MILLISECONDS.toNanos(behindMillis - keepingUp.toMillis());
            return Math.max(flushNanos, Math.min(backlogMax.toNanos(), late));
        }

        boolean fresh(long holdNanos) {
            return holdNanos <= flush.toNanos();
        }
    }

    /**
     * Heap a waiting bucket holds besides its bytes: its {@link Pending}, key, map entry and array header, and its place
     * in the lists a close reads instead of walking every bucket. Measured with {@code ./tally bench sink-heap}
     * (docs/benchmarks/sink-heap.md): 261-267 bytes with every bucket in two of those lists, rounded up.
     */
    public static final int ENTRY_BYTES = 272;

    /** The newest update of one bucket, not decoded yet. */
    private static final class Pending {
        final TopicPartition partition;
        final String key;
        final long firstNanos;
        /**
         * Fresh, it may be written from then on: at once, or a flush window after its bucket's last fresh write when that
         * was within one (the bucket is being written at most once per window).
         */
        final long notBeforeNanos;
        long lastNanos;
        long holdNanos;
        long ver;
        byte[] raw;
        long offset;
        int coalesced = 1;
        boolean create;
        /** The segment of the close it was first carried past; null while it has not been carried. */
        OffsetTracker.Segment owed;
        /** Written or dropped: the indexes that still refer to it skip it. */
        boolean gone;

        Pending(TopicPartition partition, String key, long ver, byte[] raw, long offset, long nowNanos, long holdNanos, long notBeforeNanos) {
            this.partition = partition;
            this.key = key;
            this.ver = ver;
            this.raw = raw;
            this.offset = offset;
            this.firstNanos = nowNanos;
            this.notBeforeNanos = notBeforeNanos;
            this.lastNanos = nowNanos;
            this.holdNanos = holdNanos;
        }

        /** What it counts against {@code sink.window.max-bytes}. */
        long heapBytes() {
            return ENTRY_BYTES + raw.length;
        }

        long waitNanos(Holds holds, boolean streamBehind) {
            return streamBehind ? Math.max(holdNanos, holds.catchUp().toNanos()) : holdNanos;
        }

        boolean due(long nowNanos, Holds holds, boolean streamBehind) {
            return holds.fresh(holdNanos) ? nowNanos >= notBeforeNanos : nowNanos - firstNanos >= waitNanos(holds, streamBehind);
        }

        /** When it is due at its own hold (while the stream is behind, a late bucket may wait longer: {@link #drain}). */
        long dueNanos(Holds holds) {
            return holds.fresh(holdNanos) ? notBeforeNanos : firstNanos + holdNanos;
        }
    }

    private final Decoder decoder;
    private final Holds holds;
    private final Map<TopicPartition, Map<String, Pending>> byPartition = new LinkedHashMap<>();
    /** Per partition, the last offset read since the last close and how many records that was. */
    private final Map<TopicPartition, Long> lastOffset = new HashMap<>();
    private final Map<TopicPartition, Integer> readSinceClose = new HashMap<>();
    private final List<BucketWrite> poison = new ArrayList<>();
    /**
     * The buckets written fresh within the last flush window, oldest first, and when: a fresh update of one of them waits
     * until a window after that write, any other is written at the next close after it is read.
     */
    private final LinkedHashMap<String, Long> writtenFresh = new LinkedHashMap<>();
    private int records;
    private int documents;
    /** Heap the waiting updates hold, estimated: their bytes plus {@link #ENTRY_BYTES} each. */
    private long bytes;
    private long openedNanos;
    /** When the last close was: closes come at most every eighth of a flush window (see {@link #dueAtNanos}). */
    private long closedNanos = Long.MIN_VALUE / 2;
    private long nextDueNanos = Long.MAX_VALUE;
    private long behindMillis = Long.MAX_VALUE;
    /** When a record was last read, and when a fresh one was (nanos; both absent until it happens). */
    private long lastReadNanos;
    private long lastFreshNanos;
    /**
     * The longest pause between two reads while the stream was behind, since it was last fresh: how far apart the
     * aggregation's commits come on this machine (nanos; 0 until one is seen). See {@link #quietNanos}.
     */
    private long longestPauseNanos;
    private boolean readAny;
    private boolean readFresh;

    // A close walks every waiting bucket only when a held one may be due. Closes come up to eight times a flush window
    // while updates keep up, and a backfill beside live can hold up to sink.window.max-documents history buckets, which a
    // walk at every close would go through 20 times a second (docs/benchmarks/sink-heap.md). Between walks a close looks
    // at the fresh buckets, the held ones the last walk found due, and the buckets added since the last close.
    /** Fresh buckets not yet written, in the order they became fresh (may hold gone ones). */
    private List<Pending> freshWaiting = new ArrayList<>();
    /** Held buckets the last walk found due but had no room for, in the order it found them (may hold gone ones). */
    private final ArrayDeque<Pending> dueHeld = new ArrayDeque<>();
    /** Buckets added since the last close: a close that does not walk binds those it does not write to its segments. */
    private final List<Pending> addedSinceClose = new ArrayList<>();
    /**
     * Of the held buckets outside {@link #dueHeld}, the earliest end of a hold and of a wait while the stream is behind
     * ({@link Pending#waitNanos}): none is due before the one that applies while the stream stays as behind as at the
     * last walk. They may count buckets written or made fresh since, which only brings the next walk forward.
     */
    private long heldDueNanos = Long.MAX_VALUE;
    private long heldWaitNanos = Long.MAX_VALUE;
    private boolean behindAtWalk;
    private boolean walkNext;
    private final boolean walkEveryClose;
    private int walks;

    /** Every update due at the next close ({@link Holds#NONE}). */
    public Coalescer(Decoder decoder) {
        this(decoder, Holds.NONE);
    }

    public Coalescer(Decoder decoder, Holds holds) {
        this(decoder, holds, false);
    }

    /**
     * A coalescer each of whose closes walks every waiting bucket: what the indexed closes must agree with
     * (CoalescerIndexTest), and are measured against ({@code ./tally bench sink-heap}).
     */
    public static Coalescer walkingEveryClose(Decoder decoder, Holds holds) {
        return new Coalescer(decoder, holds, true);
    }

    private Coalescer(Decoder decoder, Holds holds, boolean walkEveryClose) {
        this.decoder = decoder;
        this.holds = holds;
        this.walkEveryClose = walkEveryClose;
    }

    public void add(ConsumerRecord<String, byte[]> r) {
        add(r, System.nanoTime(), System.currentTimeMillis());
    }

    /** {@link #add} at a given time: monotonic nanos for holds, wall-clock millis against record timestamps. */
    public void add(ConsumerRecord<String, byte[]> r, long nowNanos, long nowMillis) {
        if (records == 0) openedNanos = nowNanos;
        records++;
        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
        lastOffset.put(tp, r.offset());
        readSinceClose.merge(tp, 1, Integer::sum);
        long behind = r.timestamp() >= 0 ? Math.max(0, nowMillis - r.timestamp()) : Long.MAX_VALUE;
        behindMillis = Math.min(behindMillis, behind);
        long hold = holds.nanos(behind);
        if (readAny && behindAt(lastReadNanos)) {
            long pause = nowNanos - lastReadNanos;
            // a pause far past the quiet time is an end and a new start, not the pace of one drain
            if (pause <= 4 * quietNanos()) longestPauseNanos = Math.max(longestPauseNanos, pause);
        }
        readAny = true;
        lastReadNanos = nowNanos;
        if (holds.fresh(hold)) {
            readFresh = true;
            lastFreshNanos = nowNanos;
            longestPauseNanos = 0;
        }
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
            Long written = writtenFresh.get(key);
            long notBefore = written == null ? nowNanos : Math.max(nowNanos, written + holds.flush().toNanos());
            Pending p = new Pending(tp, key, h.ver(), r.value(), r.offset(), nowNanos, hold, notBefore);
            // The first update of a bucket since its last write decides: only the update that started the bucket carries the hint.
            p.create = r.headers().lastHeader(EntityBucketSerde.CREATED_HEADER) != null;
            m.put(key, p);
            documents++;
            bytes += p.heapBytes();
            addedSinceClose.add(p);
            if (holds.fresh(hold)) {
                nextDueNanos = Math.min(nextDueNanos, notBefore);
                freshWaiting.add(p);
            } else {
                held(p);
            }
        } else {
            existing.coalesced++;
            existing.lastNanos = nowNanos;
            boolean wasFresh = holds.fresh(existing.holdNanos);
            existing.holdNanos = Math.min(existing.holdNanos, hold); // fresh news in a waiting bucket: written at the next close
            if (holds.fresh(hold)) nextDueNanos = Math.min(nextDueNanos, Math.max(nowNanos, existing.notBeforeNanos));
            if (holds.fresh(hold) && !wasFresh) freshWaiting.add(existing);
            else if (!wasFresh) held(existing);
            if (h.ver() >= existing.ver) { // equal ver: the later record wins (same value by construction)
                existing.ver = h.ver();
                bytes += r.value().length - existing.raw.length;
                existing.raw = r.value();
                existing.offset = r.offset();
            }
        }
    }

    /** Records read since the last close. */
    public int records() { return records; }

    /** Nothing waits: no bucket, no poison, no record read since the last close. */
    public boolean isEmpty() { return records == 0 && documents == 0 && poison.isEmpty(); }

    /** Distinct writes waiting now. */
    public int documents() {
        return poison.size() + documents;
    }

    /** Heap the waiting buckets hold, estimated (their bytes and {@link #ENTRY_BYTES} each; poison not counted). */
    public long bytes() {
        return bytes;
    }


    /**
     * How far behind the freshest update read since the last close was when it was read (the time since the
     * aggregation's input record was produced, which the update carries as its timestamp). Long.MAX_VALUE while no
     * timestamped record was read.
     */
    public long behindMillis() { return behindMillis; }

    /**
     * When the close is due: when the first waiting bucket is due (a fresh one at once, unless its bucket was written
     * fresh within the last flush window), and at the latest a flush window after the first record read since the last
     * close; Long.MAX_VALUE when nothing waits.
     */
    public long dueAtNanos() {
        long due = nextDueNanos;
        if (records > 0) due = Math.min(due, openedNanos + holds.flush().toNanos());
        if (!poison.isEmpty()) due = Math.min(due, openedNanos);
        // A close looks at every waiting bucket (a backfill's may be many): fresh ones written at once would otherwise
        // close at every poll. An eighth of the window also gathers a stage-5 commit's updates into one bulk call.
        return due == Long.MAX_VALUE ? due : Math.max(due, closedNanos + holds.flush().toNanos() / 8);
    }

    /**
     * Whether the whole stream is behind: updates were read within the last {@code quiet} and none was fresh within the
     * last {@code keepingUp} (a burst the aggregation works through, a catch-up). More of the backlog is then still to
     * come, and a late bucket waits the bound rather than its own hold, so a document the drain keeps changing is
     * written about once per bound. A fresh update (the pipeline caught up, or live updates beside a backfill), or a
     * stream that goes quiet for {@code quiet} (the last of a backlog, or what a rebalance read again), lets each waiting
     * bucket go at its own hold: an update's lag then at most doubles. {@code quiet} spans the aggregation's pauses
     * while it drains a backlog (it commits, and so emits, every few seconds then: CommitPace), which are not the end.
     */
    private boolean streamBehind(long nowNanos) {
        return readAny && nowNanos - lastReadNanos <= quietNanos() && behindAt(nowNanos);
    }

    /** Updates that keep up are being read: a fresh one was, within {@code keepingUp} of {@code nowNanos}. */
    public boolean keepingUp(long nowNanos) {
        return !behindAt(nowNanos);
    }

    /** No fresh update was read within {@code keepingUp} of {@code nowNanos}. */
    private boolean behindAt(long nowNanos) {
        return !readFresh || nowNanos - lastFreshNanos > holds.keepingUp().toNanos();
    }

    /**
     * How long the stream must send nothing to have gone quiet: {@code quiet}, or twice the longest pause seen between
     * reads while it has been behind, whichever is longer, up to four times {@code quiet} (and the catch-up window): a
     * sink that was not reading (a rebalance, a restart upstream) must not make the end of a backlog wait long. The
     * aggregation commits a
     * backlog every few seconds, but on a loaded machine its commits came 8 to 15 s apart in a drain of 51 rules (a
     * commit writes thousands of changed documents; the end-to-end benchmark on 2 cores), and each pause past
     * {@code quiet} released every held bucket mid-drain: 1.26-1.32 times the documents' floor instead of 1.06. The
     * pauses the drain has shown are its pace; the end of a backlog is a pause well past them.
     */
    private long quietNanos() {
        long quiet = holds.quiet().toNanos();
        return Math.min(Math.min(holds.catchUp().toNanos(), 4 * quiet), Math.max(quiet, 2 * longestPauseNanos));
    }

    /** Closes with every waiting bucket written. */
    public Window drain() {
        return drain(Long.MAX_VALUE, 0, 0);
    }

    /** {@link #drain(long, int, long)} without a bound on bytes. */
    public Window drain(long nowNanos, int keepAtMost) {
        return drain(nowNanos, keepAtMost, Long.MAX_VALUE);
    }

    /** {@link #drain(long, int, long, int)} with every due bucket written. */
    public Window drain(long nowNanos, int keepAtMost, long keepBytes) {
        return drain(nowNanos, keepAtMost, keepBytes, Integer.MAX_VALUE);
    }

    /**
     * Closes the window: one write per bucket that is due (its newest update, not decoded yet: see {@link #decode})
     * and per poison record, fresh buckets first; the others wait on. When more than {@code keepAtMost} buckets, or
     * more than {@code keepBytes} of them ({@link #bytes}), would wait, the least recently updated are written too.
     * One segment per partition read since the last close; each write is bound to the segment it owes. Of the buckets
     * due behind, at most {@code behindAtMost} are written (the sink's room for writes behind live ones); the others stay
     * due and are looked at again at the next close.
     */
    public Window drain(long nowNanos, int keepAtMost, long keepBytes, int behindAtMost) {
        if (nowNanos != Long.MAX_VALUE) {
            forgetWrittenBefore(nowNanos - holds.flush().toNanos());
            closedNanos = nowNanos;
        }
        Map<TopicPartition, OffsetTracker.Segment> segments = new LinkedHashMap<>();
        lastOffset.forEach((tp, off) -> segments.put(tp, new OffsetTracker.Segment(tp, off + 1)));
        boolean streamBehind = nowNanos != Long.MAX_VALUE && streamBehind(nowNanos);
        List<Pending> fresh = new ArrayList<>(), behind = new ArrayList<>();
        boolean walk = walkEveryClose || walkNext || nowNanos == Long.MAX_VALUE || streamBehind != behindAtWalk
                || documents > keepAtMost || bytes > keepBytes
                || nowNanos >= (behindAtWalk ? heldWaitNanos : heldDueNanos) && dueHeld.size() < behindAtMost;
        if (walk) walk(nowNanos, keepAtMost, keepBytes, behindAtMost, streamBehind, segments, fresh, behind);
        else look(nowNanos, behindAtMost, fresh, behind);
        List<BucketWrite> writes = new ArrayList<>(fresh.size() + behind.size() + poison.size());
        for (Pending p : fresh) writes.add(write(p, segments));
        for (Pending p : behind) {
            BucketWrite w = write(p, segments);
            w.behind = true;
            writes.add(w);
        }
        for (BucketWrite w : poison) writes.add(bind(w, segments.get(w.partition)));
        Window window = new Window(writes, new ArrayList<>(segments.values()), records);
        if (nowNanos != Long.MAX_VALUE) {
            for (Pending p : fresh) {
                writtenFresh.remove(p.key); // to the end: the map stays in order of writing
                writtenFresh.put(p.key, nowNanos);
            }
        }
        forget(fresh);
        forget(behind);
        // What this close carries past it owes its segment; a walk bound every bucket it kept, a look only reads those added since.
        for (Pending p : addedSinceClose) {
            if (!p.gone && p.owed == null) {
                p.owed = segments.get(p.partition);
                p.owed.add();
            }
        }
        addedSinceClose.clear();
        lastOffset.clear();
        readSinceClose.clear();
        poison.clear();
        records = 0;
        behindMillis = Long.MAX_VALUE;
        return window;
    }

    /**
     * A close that looks at every waiting bucket: those due, fresh ones first, and when more than {@code keepAtMost} or
     * {@code keepBytes} would wait, the least recently updated too; it rebuilds the indexes a {@link #look} reads.
     */
    private void walk(long nowNanos, int keepAtMost, long keepBytes, int behindAtMost, boolean streamBehind,
                      Map<TopicPartition, OffsetTracker.Segment> segments, List<Pending> fresh, List<Pending> behind) {
        List<Pending> waiting = new ArrayList<>();
        long waitingBytes = 0;
        for (Map<String, Pending> m : byPartition.values()) {
            for (Pending p : m.values()) {
                boolean due = nowNanos == Long.MAX_VALUE || p.due(nowNanos, holds, streamBehind);
                if (due && holds.fresh(p.holdNanos)) {
                    fresh.add(p);
                } else if (due && behind.size() < behindAtMost) {
                    behind.add(p);
                } else {
                    waiting.add(p);
                    waitingBytes += p.heapBytes();
                }
            }
        }
        if (waiting.size() > keepAtMost || waitingBytes > keepBytes) {
            waiting.sort(Comparator.comparingLong(p -> p.lastNanos));
            int cut = Math.max(0, waiting.size() - keepAtMost);
            for (int i = 0; i < cut; i++) waitingBytes -= waiting.get(i).heapBytes();
            while (cut < waiting.size() && waitingBytes > keepBytes) waitingBytes -= waiting.get(cut++).heapBytes();
            List<Pending> stale = waiting.subList(0, cut);
            behind.addAll(stale);
            stale.clear();
        }
        nextDueNanos = Long.MAX_VALUE;
        heldDueNanos = Long.MAX_VALUE;
        heldWaitNanos = Long.MAX_VALUE;
        freshWaiting = new ArrayList<>();
        dueHeld.clear();
        for (Pending p : waiting) {
            if (p.owed == null) {
                p.owed = segments.get(p.partition);
                p.owed.add();
            }
            if (holds.fresh(p.holdNanos)) {
                freshWaiting.add(p);
                nextDueNanos = Math.min(nextDueNanos, p.notBeforeNanos);
            } else if (p.due(nowNanos, holds, streamBehind)) {
                dueHeld.add(p);
                nextDueNanos = Math.min(nextDueNanos, nowNanos);
            } else {
                held(p);
            }
        }
        nextDueNanos = Math.min(nextDueNanos, heldNextNanos(nowNanos, streamBehind));
        behindAtWalk = streamBehind;
        walkNext = false;
        walks++;
    }

    /** Closes that walked every waiting bucket ({@code ./tally bench sink-heap} reports it). */
    public int walks() {
        return walks;
    }

    /**
     * A close that walks nothing held: it writes the fresh buckets that are due and, of the held ones the last walk found
     * due, as many as there is room for.
     */
    private void look(long nowNanos, int behindAtMost, List<Pending> fresh, List<Pending> behind) {
        List<Pending> stillWaiting = new ArrayList<>();
        long next = heldNextNanos(nowNanos, behindAtWalk); // as behind as at the last walk, or this close would walk
        for (Pending p : freshWaiting) {
            if (p.gone) continue;
            if (nowNanos >= p.notBeforeNanos) {
                fresh.add(p);
            } else {
                stillWaiting.add(p);
                next = Math.min(next, p.notBeforeNanos);
            }
        }
        freshWaiting = stillWaiting;
        while (behind.size() < behindAtMost && !dueHeld.isEmpty()) {
            Pending p = dueHeld.poll();
            if (!p.gone && !holds.fresh(p.holdNanos)) behind.add(p); // one made fresh since is in freshWaiting
        }
        if (!dueHeld.isEmpty()) next = Math.min(next, nowNanos);
        nextDueNanos = next;
    }

    private void held(Pending p) {
        heldDueNanos = Math.min(heldDueNanos, p.dueNanos(holds));
        heldWaitNanos = Math.min(heldWaitNanos, p.firstNanos + p.waitNanos(holds, true));
    }

    /**
     * When the next close should come for the held buckets: when the first is due at its hold; while the stream is
     * behind, at its longer wait, or when the stream may have gone quiet, whichever comes first.
     */
    private long heldNextNanos(long nowNanos, boolean streamBehind) {
        return streamBehind ? Math.min(heldWaitNanos, Math.max(heldDueNanos, nowNanos + quietNanos())) : heldDueNanos;
    }

    private void forgetWrittenBefore(long nanos) {
        var it = writtenFresh.values().iterator();
        while (it.hasNext() && it.next() < nanos) it.remove();
    }

    private void forget(List<Pending> written) {
        for (Pending p : written) {
            Map<String, Pending> m = byPartition.get(p.partition);
            m.remove(p.key);
            p.gone = true;
            if (m.isEmpty()) byPartition.remove(p.partition);
            documents--;
            bytes -= p.heapBytes();
        }
    }

    /** A bucket's write, bound to the segment of the close it was first carried past, or else of this close. */
    private static BucketWrite write(Pending p, Map<TopicPartition, OffsetTracker.Segment> segments) {
        OffsetTracker.Segment segment = p.owed;
        if (segment == null) {
            segment = segments.get(p.partition);
            segment.add();
        }
        BucketWrite w = new BucketWrite(p.partition, p.key, null, p.raw, p.offset, segment);
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

    private static BucketWrite bind(BucketWrite w, OffsetTracker.Segment s) {
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
                documents -= m.size();
                for (Pending p : m.values()) {
                    bytes -= p.heapBytes();
                    p.gone = true;
                }
            }
            lastOffset.remove(tp);
            Integer read = readSinceClose.remove(tp);
            if (read != null) records -= read;
        }
        poison.removeIf(w -> partitions.contains(w.partition));
        walkNext = true;
        nextDueNanos = Long.MAX_VALUE;
        for (Map<String, Pending> m : byPartition.values()) {
            for (Pending p : m.values()) nextDueNanos = Math.min(nextDueNanos, p.dueNanos(holds));
        }
    }
}
