package io.tally.benchmarks.read;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Mono;

/**
 * An open-loop load generator: request {@code i} is due at {@code start + i / rate} and is sent then, whatever happened
 * to the earlier ones, from one thread that only subscribes (every call is asynchronous). Latency runs from the due time
 * to the answer, so a client or service that falls behind shows as queueing in the figures instead of slowing the
 * arrivals down (no coordinated omission). Latencies go into HdrHistograms (microseconds), one for the run and one per
 * second of due time, so growth over the run is visible.
 */
final class OpenLoop {
    private static final long MAX_MICROS = TimeUnit.SECONDS.toMicros(60);

    /** What one run measured; {@code statuses} counts answers by status, -1 = error, -2 = no answer at the end. */
    record Result(Histogram all, List<Histogram> perSecond, Map<Integer, Integer> statuses, int maxInFlight, long lateSends,
                  String firstError) {
        int sent() {
            return (int) statuses.values().stream().mapToLong(Integer::longValue).sum();
        }

        int ok() {
            return statuses.getOrDefault(200, 0);
        }

        int errors() {
            return sent() - ok();
        }

        double ms(double percentile) {
            return all.getValueAtPercentile(percentile) / 1000.0;
        }

        double meanMs() {
            return all.getMean() / 1000.0;
        }

        /** p-th percentile of the seconds in [from, to) of the run. */
        double ms(double percentile, int from, int to) {
            Histogram h = new Histogram(MAX_MICROS, 3);
            for (int s = from; s < Math.min(to, perSecond.size()); s++) h.add(perSecond.get(s));
            return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1000.0;
        }
    }

    private OpenLoop() {}

    static Result run(int rate, int seconds, Duration timeout, IntFunction<Mono<Integer>> call) throws InterruptedException {
        int total = rate * seconds;
        long period = 1_000_000_000L / rate;
        Histogram all = new ConcurrentHistogram(MAX_MICROS, 3);
        List<Histogram> perSecond = new ArrayList<>();
        for (int s = 0; s < seconds; s++) perSecond.add(new ConcurrentHistogram(MAX_MICROS, 3));
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger maxInFlight = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<String> firstError = new java.util.concurrent.atomic.AtomicReference<>();
        CountDownLatch done = new CountDownLatch(total);
        long late = 0;
        long start = System.nanoTime() + 20_000_000L;
        for (int i = 0; i < total; i++) {
            long due = start + i * period;
            long now;
            while ((now = System.nanoTime()) < due) {
                if (due - now > 200_000) LockSupport.parkNanos(due - now - 100_000);
                else Thread.onSpinWait();
            }
            if (now - due > 1_000_000) late++;
            Histogram second = perSecond.get(i / rate);
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            Mono<Integer> m;
            try {
                m = call.apply(i);
            } catch (RuntimeException e) {
                m = Mono.error(e);
            }
            m.timeout(timeout).subscribe(
                    status -> finish(due, all, second, statuses, status, inFlight, done),
                    error -> {
                        firstError.compareAndSet(null, error.toString());
                        finish(due, all, second, statuses, -1, inFlight, done);
                    });
        }
        done.await(timeout.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        Map<Integer, Integer> counts = new TreeMap<>();
        statuses.forEach((s, n) -> counts.put(s, n.get()));
        if (done.getCount() > 0) counts.merge(-2, (int) done.getCount(), Integer::sum);
        return new Result(all, perSecond, counts, maxInFlight.get(), late, firstError.get());
    }

    private static void finish(long due, Histogram all, Histogram second, Map<Integer, AtomicInteger> statuses, int status,
                               AtomicInteger inFlight, CountDownLatch done) {
        long micros = Math.min(MAX_MICROS, (System.nanoTime() - due) / 1000);
        all.recordValue(micros);
        second.recordValue(micros);
        statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
        inFlight.decrementAndGet();
        done.countDown();
    }
}
