package io.tally.loadgen;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.UnaryOperator;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Turns an iterator of records into a Flux that emits each record no earlier than its
 * {@link OutgoingRecord#dueNanos()}, without sleeping: a timer ticks every {@link #TICK}, and each tick
 * the downstream asked for releases every record that is due by then. Ticks arriving while the sender
 * is still busy are dropped; the next one releases what is overdue, so a slow broker delays records but
 * never reorders or loses them, and memory stays bounded by one tick's worth ({@link #MAX_PER_TICK}).
 *
 * <p>Generation and encoding run on the given scheduler's thread, one record at a time, in order.
 */
final class Pacer {
    /** 5 ms: fine enough that a 1000/s rate looks smooth (5 per tick), coarse enough to cost nothing. */
    static final Duration TICK = Duration.ofMillis(5);
    /** At most this many records per tick: 10M records/s at 5 ms ticks, far above what one producer sends. */
    static final int MAX_PER_TICK = 50_000;

    private Pacer() {}

    /** Records as fast as downstream requests them: the source is not paced. */
    static Flux<OutgoingRecord> unpaced(Iterator<OutgoingRecord> source, UnaryOperator<OutgoingRecord> encode,
                                        Scheduler scheduler) {
        return Flux.fromIterable(() -> source).map(encode).subscribeOn(scheduler);
    }

    static Flux<OutgoingRecord> paced(Iterator<OutgoingRecord> source, UnaryOperator<OutgoingRecord> encode,
                                      Scheduler scheduler) {
        return Flux.defer(() -> {
            PeekingIterator it = new PeekingIterator(source);
            long[] t0 = {-1};
            return Flux.interval(Duration.ZERO, TICK, scheduler)
                    .onBackpressureDrop()
                    .map(tick -> {
                        long now = System.nanoTime();
                        if (t0[0] < 0) t0[0] = now;
                        return it.drainDue(now - t0[0], encode);
                    })
                    .takeUntil(Batch::last)
                    .concatMapIterable(Batch::records, 2);
        });
    }

    private record Batch(List<OutgoingRecord> records, boolean last) {}

    /** One record of look-ahead, so a not-yet-due record waits without being generated twice. */
    private static final class PeekingIterator {
        private final Iterator<OutgoingRecord> source;
        private OutgoingRecord next;

        PeekingIterator(Iterator<OutgoingRecord> source) {
            this.source = source;
        }

        Batch drainDue(long elapsedNanos, UnaryOperator<OutgoingRecord> encode) {
            List<OutgoingRecord> out = new ArrayList<>();
            while (out.size() < MAX_PER_TICK) {
                if (next == null) {
                    if (!source.hasNext()) return new Batch(out, true);
                    next = source.next();
                }
                if (next.dueNanos() > elapsedNanos) break;
                out.add(encode.apply(next));
                next = null;
            }
            return new Batch(out, false);
        }
    }
}
