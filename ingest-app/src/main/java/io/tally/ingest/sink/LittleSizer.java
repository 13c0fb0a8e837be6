package io.tally.ingest.sink;

import java.util.Arrays;

/**
 * How many bulk calls must be in flight to write {@code targetRate} documents per second, by Little's law:
 * concurrency = rate × call latency ÷ operations per call = rate × seconds per operation. Seconds per
 * operation are taken per clean call (its latency over its operations) and the estimate is the
 * <em>lowest</em> of the last {@code window} calls, as TCP BBR takes the minimum round trip: the fastest
 * recent call carries the distance to the service (the added latency) and the service time, and the
 * least of the queueing our own calls cause. A median would also count that queueing, and against an
 * endpoint that queues instead of throttling (429) the estimate would feed itself: more calls, longer
 * calls, more calls. The answer is bounded by {@code maxCalls}
 * ({@code sink.concurrency.max}) and by memory: calls of the observed size that together hold
 * {@code maxInFlightDocuments} ({@code sink.max-in-flight-documents}).
 *
 * <p>The limiter follows it in steps ({@link #floor(int)}: at most double, once per {@link #RECENT} calls) and
 * only while the recent calls are not queueing: their median time per request within {@link #QUEUEING_FACTOR}
 * of the fastest. Added distance slows every call alike (median close to the minimum); calls waiting behind each other at a
 * saturated endpoint spread out (median far above it), and more calls would only lengthen the queue. (Queueing
 * does not cut the limit: only 429/408/503 do. Counted as congestion, it also cut the limit during 429 storms,
 * where the calls that went through were slow too, and halved the sink's throughput under a throttle.)
 *
 * <p>Why: a call that takes longer is not a sign of congestion (that is what 429/408/503 say); with 10 ms
 * added to every request a sink that keeps the same number of calls in flight writes proportionally
 * less. The {@link AimdLimiter} takes {@link #floor(int)} as its floor.
 *
 * <p>Thread-safe: calls are recorded from Reactor threads.
 */
public final class LittleSizer {
    /** Calls recorded before the estimate is trusted: the first calls carry connection set-up. */
    static final int MIN_SAMPLES = 4;
    /**
     * Median over fastest time per request above which the calls are taken to be queueing. Without queueing the
     * spread comes from jitter and from request size (a 5-operation request is served faster than a full one).
     */
    static final double QUEUEING_FACTOR = 3.0;
    /** Calls the queueing test looks at (the newest), and the fresh calls between two steps of the floor. */
    static final int RECENT = 8;

    private final double targetRate;
    private final int maxCalls;
    private final int maxInFlightDocuments;
    private final int microBatchSize;
    private final long[] latencyNanos;
    private final int[] operations;
    private int next;
    private int samples;
    private int sinceStep;

    /**
     * @param targetRate           documents per second the sink should sustain; 0 disables the estimate
     * @param maxCalls             upper bound of the answer
     * @param maxInFlightDocuments memory bound: the answer times the mean call size stays within it
     * @param window               calls the estimate is taken over
     */
    public LittleSizer(double targetRate, int maxCalls, int maxInFlightDocuments, int window) {
        this(targetRate, maxCalls, maxInFlightDocuments, window, 100);
    }

    /** @param microBatchSize operations per request of a bulk call ({@code sink.bulk.micro-batch-size}) */
    public LittleSizer(double targetRate, int maxCalls, int maxInFlightDocuments, int window, int microBatchSize) {
        if (window < 1) throw new IllegalArgumentException("window must be >= 1");
        this.microBatchSize = microBatchSize;
        this.targetRate = targetRate;
        this.maxCalls = maxCalls;
        this.maxInFlightDocuments = maxInFlightDocuments;
        this.latencyNanos = new long[window];
        this.operations = new int[window];
    }

    /** A bulk call of {@code ops} operations took {@code nanos}. */
    public synchronized void record(int ops, long nanos) {
        if (ops <= 0) return;
        latencyNanos[next] = nanos;
        operations[next] = ops;
        next = (next + 1) % latencyNanos.length;
        samples = Math.min(samples + 1, latencyNanos.length);
        sinceStep++;
    }

    /** Median latency of the recent calls in seconds (exported as a gauge); 0 before {@link #MIN_SAMPLES} calls. */
    public synchronized double latencySeconds() {
        if (samples < MIN_SAMPLES) return 0;
        long[] l = Arrays.copyOf(latencyNanos, samples);
        Arrays.sort(l);
        return l[samples / 2] / 1e9;
    }

    /** Lowest seconds per operation of the recent calls (the sizing input); 0 before {@link #MIN_SAMPLES} calls. */
    public synchronized double secondsPerOperation() {
        if (samples < MIN_SAMPLES) return 0;
        double min = Double.MAX_VALUE;
        for (int i = 0; i < samples; i++) min = Math.min(min, latencyNanos[i] / 1e9 / operations[i]);
        return min;
    }

    /** Mean operations per recent call; 0 before {@link #MIN_SAMPLES} calls. */
    public synchronized double operationsPerCall() {
        if (samples < MIN_SAMPLES) return 0;
        long sum = 0;
        for (int i = 0; i < samples; i++) sum += operations[i];
        return (double) sum / samples;
    }

    /**
     * True when the newest {@link #RECENT} calls' median time per request (a call of n operations is ceil(n / micro-batch
     * size) requests, one after another) is over {@link #QUEUEING_FACTOR} times the fastest of the window: the calls wait
     * behind each other. Per request, not per operation: a 5-operation follow-up pays one round trip like a full
     * micro-batch, and per operation it would look 20 times slower without any queue.
     */
    public synchronized boolean queueing() {
        int n = Math.min(samples, RECENT);
        if (samples < MIN_SAMPLES) return false;
        double fastest = Double.MAX_VALUE;
        for (int i = 0; i < samples; i++) fastest = Math.min(fastest, perRequest(i));
        double[] recent = new double[n];
        for (int i = 0; i < n; i++) recent[i] = perRequest(Math.floorMod(next - 1 - i, latencyNanos.length));
        Arrays.sort(recent);
        return recent[n / 2] > QUEUEING_FACTOR * fastest;
    }

    private double perRequest(int i) {
        return (double) latencyNanos[i] / ((operations[i] + microBatchSize - 1) / microBatchSize);
    }

    /**
     * What a limit of {@code limit} may be lifted to now: one step toward {@link #target()}, at most double, at most once
     * per {@link #RECENT} clean calls (so the queueing test sees the effect of one step before the next), never while the
     * calls are {@link #queueing()}; 0 = no lift.
     */
    public synchronized int floor(int limit) {
        if (sinceStep < RECENT || queueing()) return 0;
        int step = Math.min(target(), 2 * Math.max(1, limit));
        if (step > limit) sinceStep = 0;
        return step;
    }

    /** Bulk calls needed in flight: ceil(rate × seconds per operation), within the bounds; 0 when unknown or disabled. */
    public synchronized int target() {
        double ops = operationsPerCall();
        if (targetRate <= 0 || ops == 0) return 0;
        double needed = Math.ceil(targetRate * secondsPerOperation() - 1e-9); // 2.0000000001 is 2 calls, not 3
        int memoryBound = Math.max(1, (int) Math.floor(maxInFlightDocuments / ops));
        return (int) Math.min(needed, Math.min(maxCalls, memoryBound));
    }
}
