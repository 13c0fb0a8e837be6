package io.tally.ingest.sink;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Client-side pacing of the sink's request units: a token bucket in RU that every bulk call, first attempts and
 * retries alike, draws from before it is sent, so a budget below demand is spent evenly across each second
 * instead of in a burst that the rest of the second answers with 429s.
 *
 * <p>Why: Cosmos DB (and the local endpoint) meter a container's throughput per second. Unpaced, the sink sends
 * as fast as its concurrency allows, the second's budget is gone in its first few hundred milliseconds, every
 * further operation is answered 429 (82% of the operations sent in the end-to-end benchmark's scenario d), and
 * the retries come back together after the retry-after and exhaust the next second the same way.
 *
 * <p>The rate is learned, since the sink does not know the container's throughput (nor what reads take of it):
 * <ul>
 *   <li>Unknown until the first 429 (rate infinite, nothing waits), unless a ceiling ({@code sink.ru-budget}) is
 *       given: then it starts there and never exceeds it.
 *   <li>The first 429 sets the rate to {@link #BACKOFF} × the RU the service charged in the last second
 *       ({@link #SLOTS}), raised while the answers of calls that were already on the wire come in (their charges
 *       were admitted before the 429 but booked after it).
 *   <li>Later, a call that met a 429 sets it to {@link #BACKOFF} × the rate × the share of the last second's
 *       operations that were not answered 429: what the service took of it. At most once per
 *       {@link #COOLDOWN_NANOS}, and only for a call sent after the last decrease: the calls in flight together
 *       when the budget ran out are one signal. Never below {@code floor}: a 429 that was not about this sink's
 *       rate (an injected one, another client's burst) must not stop the sink.
 *   <li>While the rate is what holds the sink back (a call had to wait in the last second) and no 429 came within
 *       the cooldown, it grows: by {@link #PROBE_PER_SECOND} per second near the rate the last 429 met (the
 *       budget is about there, probe gently), by {@link #SEEK_PER_SECOND} far from it (the last 429 was not about
 *       the budget, or the budget was raised).
 * </ul>
 *
 * <p>A call {@link #reserve reserves} its estimated charge (operations × an exponentially weighted mean of RU per
 * operation) and waits until the tokens taken before it are paid for (the bucket may go into debt by one call, as
 * the service lets the last admitted request overdraw), but no further ahead than {@link #HORIZON_SECONDS}: a
 * later call asks again, so a new rate reaches the wire within that. {@link #settle} reconciles the estimate of the
 * operations answered with the charge the responses reported (operations answered 429 keep their tokens) and
 * feeds the mean and the one-second window. Calls are kept below {@link #SLICE_SECONDS} of the rate
 * ({@link #maxOperations()}): a 1,000-operation call is ~8,900 RU, half a second of a 17,000 RU/s budget, and
 * metered per second two of them landing in one second overflow it whatever their spacing.
 *
 * <p>Pure and thread-safe: time comes from the injected clock (nanoseconds, {@link System#nanoTime} in
 * production), waiting is the caller's ({@link Ticket#waitNanos()}); calls come from Reactor threads.
 */
public final class RuPacer {
    /**
     * Share of what the service admitted that the rate drops to on a 429: just under the budget. 0.9 with a 10%/s
     * probe used 84% of the budget with 13% of operations answered 429 in the end-to-end benchmark, 0.95 80-83% with
     * 12-24%; with the decrease measured as a share of the rate (not as RU booked) 0.97 used 91% with 4.7%.
     */
    static final double BACKOFF = 0.97;
    /** One decrease per second: the service meters per second, and the calls in flight when it refused are one signal. */
    static final long COOLDOWN_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Growth per second near the rate the last 429 met: from BACKOFF back to it in under a second after the cooldown, then past it slowly. */
    static final double PROBE_PER_SECOND = 0.05;
    /**
     * Growth per second away from it: from a floor of 1,000 RU/s to 17,000 RU/s in ~13 s (after a 429 that was not
     * about the budget). 50%/s was tried and gave twice the 429s in a run too disturbed to compare, so it stays open.
     */
    static final double SEEK_PER_SECOND = 0.25;
    /** "Near" the rate the last 429 met: within this share below or above it. */
    static final double NEAR = 0.15;
    /** Tokens an idle bucket holds, in seconds of the rate: small, so an idle sink does not burst a second's worth at once. */
    static final double BURST_SECONDS = 0.1;
    /** Largest call, in seconds of the rate: at most a tenth of a second's budget can land in the wrong second. */
    static final double SLICE_SECONDS = 0.1;
    /** RU per operation before any response: a conditional patch costs 8.89 RU on the local endpoint, a create 5.01. */
    static final double INITIAL_RU_PER_OPERATION = 10;
    /** Weight of 100 operations' mean charge in the running mean (a 1,000-operation call weighs 1 - 0.8^10 = 0.89). */
    static final double WEIGHT_PER_100_OPERATIONS = 0.2;
    /**
     * The consumption window: {@link #SLOTS} slots of {@link #SLOT_NANOS}, one second, the service's metering period.
     * Charges are booked when a call's answer arrives. While the sink offers more than the budget, one second of
     * answers holds one second's budget (the end-to-end benchmark's scenario d: 7,312-7,363 RU in each of twelve
     * throttled seconds of a 7,356 RU/s budget). A two-second window, divided by the time since its first booking, was
     * used before: with the freshness probe's writes in the second before a burst, the time since the first booking was
     * two seconds while most of the burst's charges were still on the wire, and the first 429 set the rate to a third
     * of the budget (2,248 of 7,356 RU/s in one traced run).
     */
    static final int SLOTS = 10;
    static final long SLOT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    static final long WINDOW_NANOS = SLOTS * SLOT_NANOS;
    /** A call that waited within this long means the rate is what holds the sink back (growth is allowed). */
    static final long LIMITED_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How far ahead a call may reserve, in seconds of the rate: a call that finds the bucket deeper in debt waits
     * without reserving and asks again ({@link Ticket#reserved()} false). Without it every permit held a reservation,
     * up to {@code sink.concurrency.max} calls of {@link #SLICE_SECONDS}: 2-3.5 s of waits fixed at the old rate
     * (scenario d, 32 permits all waiting), so a decrease took seconds to reach the wire and the RU answered per
     * second swung between 0.4 and 1.3 budgets.
     */
    static final double HORIZON_SECONDS = 0.2;

    /**
     * What a call reserved, how long it must wait, and when it goes out (clock nanoseconds). Not {@code reserved}: the
     * bucket is more than {@link #HORIZON_SECONDS} in debt; nothing was taken, and the call asks again after
     * {@code waitNanos} (at the rate in force then).
     */
    public record Ticket(int operations, double estimate, long waitNanos, long sendNanos, boolean reserved) {}

    private final LongSupplier clock;
    private final double minRate;
    private double floor;
    private double ceiling;
    private final double[] slotCharge = new double[SLOTS];
    private final long[] slotIndex = new long[SLOTS];
    private final long[] slotOperations = new long[SLOTS];
    private final long[] slotRefused = new long[SLOTS];
    private double rate;
    private double tokens;
    private double ruPerOperation = INITIAL_RU_PER_OPERATION;
    private double mark;
    private double rateBeforeDecrease;
    private long advancedAt;
    private long lastThrottleNanos;
    private long lastWaitNanos;
    private long waitedNanos;

    /**
     * @param ceiling RU/s never exceeded, and the starting rate ({@code sink.ru-budget}); 0 = unknown, learned from 429s
     * @param floor   RU/s the rate never drops below, unless the ceiling is lower: a budget is never exceeded
     * @param clock   nanoseconds, monotonic
     */
    public RuPacer(double ceiling, double floor, LongSupplier clock) {
        if (floor <= 0) throw new IllegalArgumentException("floor must be > 0");
        this.clock = clock;
        this.minRate = floor;
        this.ceiling = ceiling > 0 ? ceiling : Double.POSITIVE_INFINITY;
        this.floor = Math.min(floor, this.ceiling);
        this.rate = this.ceiling;
        long now = clock.getAsLong();
        this.advancedAt = now;
        this.lastThrottleNanos = now - COOLDOWN_NANOS;
        this.lastWaitNanos = now - LIMITED_NANOS - 1;
        java.util.Arrays.fill(slotIndex, Long.MIN_VALUE);
    }

    /** Takes the estimated charge of a call of {@code operations}; the caller sends it after {@link Ticket#waitNanos()}. */
    public synchronized Ticket reserve(int operations) {
        long now = clock.getAsLong();
        advance(now);
        double estimate = operations * ruPerOperation;
        if (!pacing()) return new Ticket(operations, estimate, 0, now, true);
        double horizon = HORIZON_SECONDS * rate;
        if (tokens < -horizon) { // ask again once the debt is within the horizon
            long later = (long) Math.ceil((-tokens - horizon) / rate * 1e9);
            lastWaitNanos = now;
            return new Ticket(operations, 0, later, now + later, false);
        }
        long wait = tokens >= 0 ? 0 : (long) Math.ceil(-tokens / rate * 1e9);
        tokens -= estimate;
        if (wait > 0) {
            lastWaitNanos = now;
            waitedNanos += wait;
        }
        return new Ticket(operations, estimate, wait, now + wait, true);
    }

    /**
     * The call of {@code ticket} was answered: {@code charge} RU in all, {@code chargedOperations} of its operations
     * answered other than 429 (those carry the charge), {@code throttled} when any was answered 429.
     */
    public synchronized void settle(Ticket ticket, double charge, int chargedOperations, boolean throttled) {
        long now = clock.getAsLong();
        advance(now);
        if (pacing()) {
            // Only the operations the service answered give back what they cost less than estimated. One answered 429
            // keeps its tokens: the second's budget is spent, and giving them back sent them again at once into the same
            // spent second (scenario d: 18,297 operations answered 429 in the second after the first 429).
            double answered = ticket.operations() == 0 ? 0 : ticket.estimate() * chargedOperations / ticket.operations();
            tokens = Math.min(capacity(), tokens + answered - charge);
        }
        if (chargedOperations > 0 && charge > 0) {
            double weight = 1 - Math.pow(1 - WEIGHT_PER_100_OPERATIONS, chargedOperations / 100.0);
            ruPerOperation += weight * (charge / chargedOperations - ruPerOperation);
        }
        book(now, charge, ticket.operations(), ticket.operations() - chargedOperations);
        // Only a call sent after the last decrease says the new rate is still too high: the calls sent before it
        // (in flight, or reserved at the old rate) keep answering 429 for a while, and counting them compounded the
        // decrease to a third of the budget in the benchmark.
        if (throttled && now - lastThrottleNanos >= COOLDOWN_NANOS && ticket.sendNanos() > lastThrottleNanos) {
            rateBeforeDecrease = rate;
            // The rate that met the 429. While pacing: the share of the rate the service admitted over the last second
            // (operations answered, not RU booked: both are booked when answers arrive, so answers that come in lumps
            // move them together and the share stays true, where the RU booked in a second read 86-93% of the rate at
            // decreases that a 1-7% share of 429s set off). Before (no rate yet): the RU consumed in the last second.
            mark = pacing() ? rate * (1 - refusedShare(now)) : consumed(now);
            rate = clamp(BACKOFF * mark);
            tokens = Math.min(tokens, 0); // the second's budget is spent: nothing saved up goes out at once
            lastThrottleNanos = now;
        } else if (ticket.sendNanos() <= lastThrottleNanos && now - lastThrottleNanos < COOLDOWN_NANOS) {
            // The answer of a call that was on the wire at the last decrease: the service had admitted its charge
            // before the decrease was measured, so the mark was low by it. The first 429 of a burst comes while most
            // of the burst is still in flight; without this correction it set the rate to about a third of the budget.
            double corrected = Math.min(rateBeforeDecrease, consumed(now));
            if (corrected > mark) {
                mark = corrected;
                rate = clamp(Math.max(rate, BACKOFF * mark));
            }
        }
    }

    /**
     * A new ceiling, RU/s (> 0): this sink's share of a fleet's budget changed with the partitions it owns. The rate
     * moves in proportion, so a rate learned below the old ceiling stays as far below the new one; a raise takes
     * effect at once rather than by the probe's growth, since it means another sink stopped spending that share.
     */
    public synchronized void limit(double newCeiling) {
        if (!(newCeiling > 0)) throw new IllegalArgumentException("ceiling must be > 0");
        long now = clock.getAsLong();
        advance(now);
        double old = ceiling;
        ceiling = newCeiling;
        floor = Math.min(minRate, ceiling);
        rate = Double.isInfinite(old) ? Math.min(rate, ceiling) : clamp(rate * newCeiling / old);
        mark = Math.min(mark, ceiling);
        tokens = Math.min(tokens, capacity());
    }

    /** RU/s never exceeded (infinite without a budget). */
    public synchronized double ceiling() { return ceiling; }

    /** True once there is a rate to keep (a ceiling, or a 429 seen); before that nothing waits. */
    public synchronized boolean pacing() { return !Double.isInfinite(rate); }

    /** RU/s admitted now; 0 while not {@link #pacing()} (exported as a gauge). */
    public synchronized double rate() { return pacing() ? rate : 0; }

    /** The running mean charge of one operation, RU. */
    public synchronized double ruPerOperation() { return ruPerOperation; }

    /** Total time calls were told to wait, nanoseconds. */
    public synchronized long waitedNanos() { return waitedNanos; }

    /** Most operations one call should carry now: {@link #SLICE_SECONDS} of the rate, at least 1; unbounded while not pacing. */
    public synchronized int maxOperations() {
        if (!pacing()) return Integer.MAX_VALUE;
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.floor(rate * SLICE_SECONDS / ruPerOperation)));
    }

    /** Tokens now, RU (negative: reserved ahead); for tests. */
    synchronized double tokens() { return tokens; }

    private double capacity() { return rate * BURST_SECONDS; }

    private double clamp(double r) { return Math.max(floor, Math.min(ceiling, r)); }

    /** Refills the bucket and grows the rate for the time since the last call. */
    private void advance(long now) {
        long dt = now - advancedAt;
        if (dt <= 0) return;
        advancedAt = now;
        if (!pacing()) return;
        tokens = Math.min(capacity(), tokens + rate * dt / 1e9);
        long growing = Math.min(dt, now - lastThrottleNanos - COOLDOWN_NANOS); // not for time inside the cooldown
        if (now - lastWaitNanos <= LIMITED_NANOS && growing > 0) {
            boolean near = rate >= (1 - NEAR) * mark && rate <= (1 + NEAR) * mark;
            rate = clamp(rate * Math.pow(1 + (near ? PROBE_PER_SECOND : SEEK_PER_SECOND), growing / 1e9));
        }
    }

    private void book(long now, double charge, int operations, int refused) {
        long index = Math.floorDiv(now, SLOT_NANOS);
        int i = (int) Math.floorMod(index, (long) SLOTS);
        if (slotIndex[i] != index) {
            slotIndex[i] = index;
            slotCharge[i] = 0;
            slotOperations[i] = 0;
            slotRefused[i] = 0;
        }
        slotCharge[i] += charge;
        slotOperations[i] += operations;
        slotRefused[i] += refused;
    }

    /** Share of the operations answered in the last second (the window) that were not charged (429, or no answer). */
    private double refusedShare(long now) {
        long index = Math.floorDiv(now, SLOT_NANOS);
        long operations = 0;
        long refused = 0;
        for (int i = 0; i < SLOTS; i++) {
            if (slotIndex[i] > index - SLOTS) {
                operations += slotOperations[i];
                refused += slotRefused[i];
            }
        }
        return operations == 0 ? 0 : (double) refused / operations;
    }

    /** RU booked in the last second (the window), per second. */
    private double consumed(long now) {
        long index = Math.floorDiv(now, SLOT_NANOS);
        double sum = 0;
        for (int i = 0; i < SLOTS; i++) {
            if (slotIndex[i] > index - SLOTS) sum += slotCharge[i];
        }
        return sum * 1e9 / WINDOW_NANOS;
    }
}
