package io.tally.ingest.sink;

import io.tally.ingest.sink.BulkExecutor.ItemResult;
import io.tally.ingest.sink.CosmosStatusClassifier.Decision;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Stages 8-9: owns every write between "handed over by the poll loop" and "durable". A window's writes
 * are sorted by logical partition and cut into chunks; each chunk is one bulk call holding one permit
 * of the {@link AimdLimiter} and, while the {@link RuPacer} paces, waits for its estimated request units
 * before it is sent (retries too; a chunk larger than the pacer's slice of a second is cut). Each result
 * is classified ({@link CosmosStatusClassifier}): written and
 * stale writes complete their offset segment; 404/409 switch between conditional patch and create at
 * once; transient failures go back after an exponential backoff with full jitter, never shorter than
 * the service's retry-after; 400/413/422 go to the DLQ and complete there.
 *
 * <p>Bounds (429s excepted, see {@link #throttled}): a write that used up {@code sink.retry.max-attempts} or {@code sink.retry.max-elapsed.ms}
 * is <em>stalled</em>: it keeps being retried every {@code sink.retry.max-backoff.ms} (nothing is ever
 * dropped), its partition's commits stop behind it, and {@link #stalled()} tells the poll loop to pause
 * every partition until it goes through. In-flight documents are capped by the poll loop through
 * {@link #inFlightDocuments()}.
 *
 * <p>Thread contract: {@link #submit}, {@link #awaitPartitions} and {@link #abandon} are called from the
 * poll thread; results are handled on Reactor threads. Counters are atomic; a {@link BucketWrite} is
 * touched by one call at a time. An unexpected error (a bug, not a Cosmos status) is kept in
 * {@link #failure()} and rethrown by the poll loop, which stops the sink without committing.
 */
public final class BulkWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BulkWriter.class);
    /** Clean calls the Little's-law estimate is taken over: a few rounds of the limit, so it follows a latency change in seconds. */
    private static final int SIZER_WINDOW = 32;

    private final SinkSettings settings;
    private final BulkExecutor executor;
    private final DeadLetterPublisher deadLetters;
    private final SinkMetrics metrics;
    private final LittleSizer sizer;
    private final AimdLimiter limiter;
    private final RuPacer pacer;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger behindInFlight = new AtomicInteger();
    private final AtomicInteger stalledWrites = new AtomicInteger();
    private final Map<TopicPartition, AtomicInteger> inFlightByPartition = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> generations = new ConcurrentHashMap<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Disposable.Composite running = Disposables.composite();

    public BulkWriter(SinkSettings settings, BulkExecutor executor, DeadLetterPublisher deadLetters, SinkMetrics metrics) {
        this.settings = settings;
        this.executor = executor;
        this.deadLetters = deadLetters;
        this.metrics = metrics;
        this.sizer = new LittleSizer(settings.targetRate(), settings.concurrencyMax(), settings.maxInFlightDocuments(), SIZER_WINDOW,
                settings.microBatchSize());
        // Cooldown 1 s: longer than one bulk call's round trip, so the calls that were in flight together when a
        // throttle hit count as one congestion signal, not log2(limit) of them. Floor hold-off 10 s: a throttled sink
        // grows back by AIMD alone instead of jumping back to the level that was just throttled.
        this.limiter = new AimdLimiter(settings.concurrencyInitial(), settings.concurrencyMin(), settings.concurrencyMax(),
                TimeUnit.SECONDS.toNanos(1), sizer::floor, TimeUnit.SECONDS.toNanos(10));
        metrics.gauge("tally.sink.concurrency.limit", "AIMD limit of concurrent bulk calls", limiter::limit);
        metrics.gauge("tally.sink.target.concurrency", "bulk calls needed in flight for sink.target-rate at the observed call "
                + "latency (Little's law), within sink.concurrency.max and sink.max-in-flight-documents", sizer::target);
        metrics.gauge("tally.sink.call.latency.seconds", "median latency of the recent clean bulk calls (the sizing input)",
                sizer::latencySeconds);
        // Ceiling: the sink's own budget when set; else learned from 429s (RuPacer). Disabled: a rate that never binds.
        this.pacer = settings.pacing() ? new RuPacer(settings.ruBudget(), settings.pacingMinRate(), System::nanoTime) : null;
        if (pacer != null) {
            metrics.gauge("tally.sink.pacing.rate", "RU/s the sink's pacer admits (learned from 429s, or sink.ru-budget); "
                    + "0 while it is not pacing", pacer::rate);
            metrics.gauge("tally.sink.pacing.ru.per.operation", "running mean charge of one bulk operation (the pacer's estimate)",
                    pacer::ruPerOperation);
        }
        metrics.gauge("tally.sink.in.flight.documents", "documents handed to Cosmos, not yet durable", inFlight::get);
        metrics.gauge("tally.sink.stalled.writes", "writes past their retry bound, retried at the longest backoff", stalledWrites::get);
    }

    /**
     * The RU/s this sink may spend from now on ({@link RuPacer#limit}); nothing while pacing is off. Any thread.
     */
    public void limitBudget(double ruPerSecond) {
        if (pacer != null) pacer.limit(ruPerSecond);
    }

    /** Starts writing; returns at once. Every write ends durable, dead-lettered, or abandoned by {@link #abandon}. */
    public void submit(Collection<BucketWrite> writes) {
        List<BucketWrite> documents = new ArrayList<>(writes.size());
        for (BucketWrite w : writes) {
            w.generation = generations.getOrDefault(w.partition, 0L);
            inFlight.incrementAndGet();
            if (w.behind) behindInFlight.incrementAndGet();
            inFlightByPartition.computeIfAbsent(w.partition, p -> new AtomicInteger()).incrementAndGet();
            if (w.poison != null) subscribe(deadLetter(w, DeadLetter.undecodable(w.poison)));
            else documents.add(w);
        }
        // Group by logical partition: one entity's buckets travel in the same micro-batch.
        documents.sort(Comparator.comparing((BucketWrite w) -> w.doc.pk()));
        for (int i = 0; i < documents.size(); i += settings.chunkSize()) {
            subscribe(chunk(new ArrayList<>(documents.subList(i, Math.min(documents.size(), i + settings.chunkSize())))));
        }
    }

    public int inFlightDocuments() { return inFlight.get(); }

    /** Of those, the writes the coalescer marked as behind ({@link BucketWrite#behind}). */
    public int behindInFlightDocuments() { return behindInFlight.get(); }

    /** True while a write is past its retry bound: the poll loop stops taking updates. */
    public boolean stalled() { return stalledWrites.get() > 0; }

    public int concurrencyLimit() { return limiter.limit(); }

    /** Bulk calls needed in flight at the observed latency ({@link LittleSizer#target()}); 0 while unknown. */
    public int targetConcurrency() { return sizer.target(); }

    public Throwable failure() { return failure.get(); }

    /** Waits until no write of these partitions is in flight; false when {@code timeout} passed first. */
    public boolean awaitPartitions(Collection<TopicPartition> partitions, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (partitions.stream().anyMatch(p -> inFlightByPartition.getOrDefault(p, new AtomicInteger()).get() > 0)) {
            if (System.nanoTime() > deadline) return false;
            Thread.sleep(5); // the poll thread, inside a rebalance callback: no Reactor thread is blocked here
        }
        return true;
    }

    /**
     * This instance no longer owns the partitions: their remaining writes are never sent again (a call
     * already on the wire may still land; the ver condition makes that harmless) and never complete
     * their segments.
     */
    public void abandon(Collection<TopicPartition> partitions) {
        partitions.forEach(p -> generations.merge(p, 1L, Long::sum));
    }

    private boolean abandoned(BucketWrite w) {
        return generations.getOrDefault(w.partition, 0L) != w.generation;
    }

    private void subscribe(Mono<Void> work) {
        Disposable[] self = new Disposable[1];
        self[0] = work.doFinally(s -> { if (self[0] != null) running.remove(self[0]); })
                .subscribe(null, this::fail);
        if (!self[0].isDisposed()) running.add(self[0]);
    }

    private void fail(Throwable e) {
        if (failure.compareAndSet(null, e)) log.error("sink writer failed; the sink stops without committing further", e);
    }

    /** One bulk call for the writes, then their follow-ups (switch, retry, DLQ). */
    private Mono<Void> chunk(List<BucketWrite> writes) {
        return Mono.defer(() -> {
            List<BucketWrite> live = new ArrayList<>(writes.size());
            for (BucketWrite w : writes) {
                if (abandoned(w)) finish(w, null);
                else live.add(w);
            }
            if (live.isEmpty()) return Mono.empty();
            int slice = pacer == null ? Integer.MAX_VALUE : pacer.maxOperations();
            for (int i = slice; i < live.size(); i += slice) { // the rest as calls of their own (see RuPacer.SLICE_SECONDS)
                subscribe(send(new ArrayList<>(live.subList(i, Math.min(live.size(), i + slice)))));
            }
            return send(live.size() > slice ? new ArrayList<>(live.subList(0, slice)) : live);
        });
    }

    private Mono<Void> send(List<BucketWrite> writes) {
        return limiter.acquire().then(Mono.defer(() -> paced(writes))).flatMap(this::followUp);
    }

    /**
     * Waits for the call's estimated request units, holding its permit: a call that waited for tokens before its
     * permit would let the tokens it reserved pass unused. The pacer reserves at most {@link RuPacer#HORIZON_SECONDS}
     * ahead; a call beyond that asks again later, so the waits follow a change of the rate.
     */
    private Mono<Outcome> paced(List<BucketWrite> writes) {
        return pacer == null ? call(writes, null) : paced(writes, System.nanoTime());
    }

    /** Asks the pacer until it reserves (it does not reserve further ahead than {@link RuPacer#HORIZON_SECONDS}). */
    private Mono<Outcome> paced(List<BucketWrite> writes, long since) {
        RuPacer.Ticket ticket = pacer.reserve(writes.size());
        if (!ticket.reserved()) {
            return Mono.delay(Duration.ofNanos(ticket.waitNanos())).then(Mono.defer(() -> paced(writes, since)));
        }
        metrics.pacingWait.record(ticket.sendNanos() - since, TimeUnit.NANOSECONDS);
        if (ticket.waitNanos() == 0) return call(writes, ticket);
        return Mono.delay(Duration.ofNanos(ticket.waitNanos())).then(Mono.defer(() -> call(writes, ticket)));
    }

    private record Outcome(List<BucketWrite> now, List<BucketWrite> later, Duration delay, List<Mono<Void>> deadLetters) {}

    private Mono<Outcome> call(List<BucketWrite> writes, RuPacer.Ticket ticket) {
        long t0 = System.nanoTime();
        metrics.operationsSent.increment(writes.size());
        for (BucketWrite w : writes) {
            if (w.attempt++ == 0) w.firstAttemptNanos = t0;
        }
        return executor.execute(writes).collectList()
                .onErrorResume(e -> Mono.just(writes.stream() // the whole call failed: every write gets the call's error
                        .map(w -> new ItemResult(w, statusOf(e), 0, Duration.ZERO, 0, e)).toList()))
                .map(results -> handle(writes, results, System.nanoTime() - t0, ticket));
    }

    private static int statusOf(Throwable e) {
        return e instanceof com.azure.cosmos.CosmosException ce ? ce.getStatusCode() : 0;
    }

    private Outcome handle(List<BucketWrite> writes, List<ItemResult> results, long callNanos, RuPacer.Ticket ticket) {
        metrics.call(writes.size(), Duration.ofNanos(callNanos));
        List<BucketWrite> now = new ArrayList<>();
        List<BucketWrite> later = new ArrayList<>();
        List<Mono<Void>> dead = new ArrayList<>();
        Duration delay = Duration.ZERO;
        boolean congested = false;
        boolean throttled = false;
        double charge = 0;
        int charged = 0;
        Map<BucketWrite, Boolean> answered = new IdentityHashMap<>();
        try {
            for (ItemResult r : results) {
                BucketWrite w = r.write();
                answered.put(w, true);
                metrics.requestUnits.increment(r.requestCharge());
                charge += r.requestCharge();
                if (r.status() != 429 && r.status() != 0) charged++;
                w.lastStatus = r.status();
                w.lastSubStatus = r.subStatus();
                Decision d = CosmosStatusClassifier.classify(r.status(), r.subStatus(), w.kind);
                switch (d) {
                    case SUCCESS -> finish(w, metrics.written);
                    case IGNORE -> finish(w, metrics.stale);
                    case CREATE_INSTEAD -> { w.kind = WriteKind.CREATE; now.add(w); }
                    case PATCH_INSTEAD -> { w.kind = WriteKind.PATCH_IF_NEWER; now.add(w); }
                    case RETRY, RETRY_CONGESTED -> {
                        metrics.retry(r.status(), r.subStatus());
                        Duration wait;
                        if (r.status() == 429) {
                            throttled = true;
                            // A throttle is the pacer's signal while it paces: it lowers the rate; the concurrency
                            // limit is left to 408/503 (why: docs/sink.md, Pacing request units).
                            congested |= !pacingOwnsThrottles();
                            metrics.throttled.increment();
                            wait = throttled(w, r.retryAfter());
                        } else {
                            congested |= d == Decision.RETRY_CONGESTED;
                            wait = backoff(w, r.retryAfter());
                        }
                        if (wait.compareTo(delay) > 0) delay = wait;
                        later.add(w);
                        if (log.isDebugEnabled()) log.debug("retrying {} after {}:{}", w, r.status(), r.subStatus());
                    }
                    case FAIL -> dead.add(deadLetter(w, DeadLetter.refused(r.status(), r.subStatus(), message(r.error()))));
                }
            }
            for (BucketWrite w : writes) { // an operation without a result is retried like a lost connection
                if (!answered.containsKey(w)) {
                    metrics.retry(0, 0);
                    Duration wait = backoff(w, Duration.ZERO);
                    if (wait.compareTo(delay) > 0) delay = wait;
                    later.add(w);
                }
            }
        } finally {
            // Only clean calls size the limit: a throttled call's latency measures the congestion, not the service time.
            if (!congested && !throttled) sizer.record(writes.size(), callNanos);
            if (ticket != null) pacer.settle(ticket, charge, charged, throttled);
            limiter.release(congested);
        }
        return new Outcome(now, later, delay, dead);
    }

    /**
     * Switches and retries go out as subscriptions of their own rather than inside this call's: nested, a
     * write retried for a minute kept every earlier attempt's bulk operations reachable through the chain of
     * subscribers (seen: 200,000 operations and a full 1 GB heap during a 60 s outage). Nothing waits for
     * the chain: a write completes through {@link #finish}.
     */
    private Mono<Void> followUp(Outcome o) {
        if (!o.now().isEmpty()) subscribe(chunk(o.now()));
        if (!o.later().isEmpty()) subscribe(Mono.delay(o.delay()).then(chunk(o.later())));
        return Mono.when(o.deadLetters());
    }

    /** True when a 429 should only lower the pacer's rate and not also halve the concurrency limit. */
    private boolean pacingOwnsThrottles() {
        return pacer != null;
    }

    /**
     * Exponential backoff with full jitter (uniform in [0, min(max, initial * 2^(attempt-1))]), never
     * shorter than the service's retry-after. Past the attempt or time bound the write is stalled and
     * retried every max backoff.
     */
    Duration backoff(BucketWrite w, Duration retryAfter) {
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - w.firstAttemptNanos);
        if (w.attempt >= settings.retryMaxAttempts() || elapsedMs >= settings.retryMaxElapsed().toMillis()) {
            if (!w.stalled) {
                w.stalled = true;
                if (stalledWrites.getAndIncrement() == 0) { // once per stall, not once per write
                    log.error("{} still failing ({}:{}) after {} attempts over {} ms: sink stalls (no new updates, no commits "
                                    + "past it) and retries it every {} ms", w, w.lastStatus, w.lastSubStatus, w.attempt, elapsedMs,
                            settings.retryMaxBackoff().toMillis());
                } else if (log.isDebugEnabled()) {
                    log.debug("{} stalled too ({}:{})", w, w.lastStatus, w.lastSubStatus);
                }
            }
            return max(settings.retryMaxBackoff(), retryAfter);
        }
        long ceiling = Math.min(settings.retryMaxBackoff().toMillis(),
                settings.retryInitialBackoff().toMillis() << Math.min(20, Math.max(0, w.attempt - 1)));
        Duration jittered = Duration.ofMillis(ThreadLocalRandom.current().nextLong(ceiling + 1));
        return max(jittered, retryAfter);
    }

    /**
     * A 429 is the service answering "not now, in retry-after": a request budget spent, not an outage. It
     * restarts the write's attempt count and elapsed clock, so a sustained budget below demand slows the
     * sink to the budget (the limiter halves, each write waits its retry-after) instead of stalling it and
     * dropping to one retry per max backoff. The stall bound stays for what has no such answer (503, 408,
     * lost connections).
     */
    Duration throttled(BucketWrite w, Duration retryAfter) {
        w.attempt = 0;
        Duration jitter = Duration.ofMillis(ThreadLocalRandom.current().nextLong(settings.retryInitialBackoff().toMillis() + 1));
        return max(jitter, retryAfter);
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private Mono<Void> deadLetter(BucketWrite w, DeadLetter letter) {
        return deadLetters.publish(w, letter)
                .retryWhen(Retry.backoff(Long.MAX_VALUE, settings.retryInitialBackoff()).maxBackoff(settings.retryMaxBackoff())
                        .doBeforeRetry(s -> log.warn("DLQ publish of {} failed, retrying: {}", w, s.failure().toString())))
                .doOnSuccess(v -> {
                    log.warn("{} dead-lettered: {}", w, letter);
                    finish(w, metrics.deadLettered);
                });
    }

    private static String message(Throwable e) {
        if (e == null) return "";
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        m = nl >= 0 ? m.substring(0, nl) : m;
        return m.length() > 300 ? m.substring(0, 300) : m;
    }

    /** The write is durable (counter given) or abandoned (null): it leaves the in-flight set. */
    private void finish(BucketWrite w, io.micrometer.core.instrument.Counter outcome) {
        if (w.stalled) {
            w.stalled = false;
            if (stalledWrites.decrementAndGet() == 0 && outcome != null) log.info("{} went through; sink resumes", w);
        }
        if (outcome != null && !abandoned(w)) {
            outcome.increment();
            w.segment.complete();
        }
        inFlight.decrementAndGet();
        if (w.behind) behindInFlight.decrementAndGet();
        inFlightByPartition.get(w.partition).decrementAndGet();
    }

    @Override
    public void close() {
        running.dispose();
    }
}
