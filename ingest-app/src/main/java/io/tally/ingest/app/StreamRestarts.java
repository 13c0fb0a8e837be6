package io.tally.ingest.app;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.tally.schemas.serde.SchemaRegistryException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens when a Kafka Streams thread dies: it is replaced (the failed task restarts from its last commit),
 * but only after a wait that doubles with each failure in a row, from {@code ingest.restart-backoff.initial.ms} up to
 * {@code ingest.restart-backoff.max.ms}. Without the wait a failure that outlasts one attempt — the schema registry
 * down, so no record with a schema id not yet cached can be decoded — replaces the thread over and over, each time
 * rejoining the group and restoring state for nothing. A replacement that runs longer than the largest wait without
 * failing ends the series: the next failure waits the initial time again.
 *
 * <p>The wait happens in the handler, on the dying thread, before it hands its tasks back: nothing of the failed
 * attempt is committed, so waiting changes when the work is redone, never what it produces. A shutdown ends the wait.
 * State for /health/ready and /metrics: {@link #backingOff()}, {@link #rejoining()}, {@link #consecutiveFailures()},
 * {@link #lastCause()}.
 */
final class StreamRestarts implements StreamsUncaughtExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(StreamRestarts.class);

    /** The bounded exponential wait before replacement number {@code n} of a series (1-based). */
    record Backoff(Duration initial, Duration max) {
        Duration before(int n) {
            long ms = initial.toMillis() << Math.min(Math.max(n - 1, 0), 30);
            return Duration.ofMillis(ms <= 0 || ms > max.toMillis() ? max.toMillis() : ms);
        }
    }

    /** Why the thread died, as far as it decides what to expect: an unreachable registry comes back by itself. */
    enum Cause {
        REGISTRY_UNAVAILABLE("registry-unavailable"), OTHER("other");

        final String tag;

        Cause(String tag) {
            this.tag = tag;
        }

        static Cause of(Throwable e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof SchemaRegistryException r && r.isRetriable()) return REGISTRY_UNAVAILABLE;
            }
            return OTHER;
        }
    }

    private final Backoff backoff;
    private final LongSupplier clockMs;
    private final CountDownLatch closing = new CountDownLatch(1);
    private int failuresInARow;
    private long lastReplacedAtMs = Long.MIN_VALUE;
    private volatile long backingOffUntilMs;
    private volatile Cause lastCause;
    /** A replacement was started and Kafka Streams has not been RUNNING since. */
    private volatile boolean rejoining;
    private final Counter registryFailures;
    private final Counter otherFailures;

    /**
     * Registers {@code tally_ingest_stream_thread_failures_total{cause}}, {@code tally_ingest_stream_thread_backoff_seconds}
     * (the wait still ahead, 0 when none) and {@code tally_ingest_stream_thread_consecutive_failures}.
     */
    StreamRestarts(Backoff backoff, MeterRegistry registry) {
        this(backoff, registry, System::currentTimeMillis);
    }

    StreamRestarts(Backoff backoff, MeterRegistry registry, LongSupplier clockMs) {
        this.backoff = backoff;
        this.clockMs = clockMs;
        String failures = "tally.ingest.stream.thread.failures";
        String doc = "Kafka Streams threads that died and were replaced, by cause";
        registryFailures = Counter.builder(failures).tag("cause", Cause.REGISTRY_UNAVAILABLE.tag).description(doc).register(registry);
        otherFailures = Counter.builder(failures).tag("cause", Cause.OTHER.tag).description(doc).register(registry);
        Gauge.builder("tally.ingest.stream.thread.backoff.seconds", this, r -> r.backoffRemaining().toMillis() / 1000.0)
                .description("Wait still ahead before a failed Kafka Streams thread is replaced (0 when none)").register(registry);
        Gauge.builder("tally.ingest.stream.thread.consecutive.failures", this, StreamRestarts::consecutiveFailures)
                .description("Kafka Streams thread failures in the current series (0 once a replacement outlived the longest wait)")
                .register(registry);
    }

    @Override
    public StreamThreadExceptionResponse handle(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.tally.ingest.topology.RulesGenerationException) {
                // a replaced thread would meet the same document: only a restart with the applied rules helps
                log.error("stream thread failed: {}; stopping this instance's aggregation", t.getMessage());
                return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            }
        }
        Cause cause = Cause.of(e);
        Duration wait = recordFailure(cause);
        (cause == Cause.REGISTRY_UNAVAILABLE ? registryFailures : otherFailures).increment();
        if (cause == Cause.REGISTRY_UNAVAILABLE) {
            log.warn("stream thread failed: the schema registry is unreachable ({}); failure {} in a row, replacing the thread in {} ms",
                    e.getMessage(), failuresInARow, wait.toMillis());
        } else {
            log.error("stream thread failed (failure {} in a row); replacing it in {} ms, the failed task restarts from its last commit",
                    failuresInARow, wait.toMillis(), e);
        }
        try {
            if (closing.await(wait.toMillis(), TimeUnit.MILLISECONDS)) log.info("shutting down: not waiting to replace the stream thread");
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        } finally {
            synchronized (this) {
                lastReplacedAtMs = clockMs.getAsLong();
                backingOffUntilMs = 0;
                rejoining = true;
            }
        }
        return StreamThreadExceptionResponse.REPLACE_THREAD;
    }

    /** Counts a failure and returns the wait before its replacement. */
    synchronized Duration recordFailure(Cause cause) {
        long now = clockMs.getAsLong();
        if (lastReplacedAtMs != Long.MIN_VALUE && now - lastReplacedAtMs > backoff.max().toMillis()) failuresInARow = 0;
        failuresInARow++;
        Duration wait = backoff.before(failuresInARow);
        lastCause = cause;
        backingOffUntilMs = now + wait.toMillis();
        return wait;
    }

    /**
     * Kafka Streams changed state (its state listener): RUNNING after a replacement means the new thread has rejoined
     * the group and has its tasks. The rejoin can take the group's session.timeout.ms: Kafka Streams 4.3 shuts a
     * replaced thread down without leaving the group, so the group waits for the old member to expire.
     */
    void streamsStateChanged(KafkaStreams.State now) {
        if (now == KafkaStreams.State.RUNNING) rejoining = false;
    }

    /** A failed thread was replaced and the replacement has not started working yet. */
    boolean rejoining() {
        return rejoining;
    }

    /** Ends every wait now: the application is closing. */
    void close() {
        closing.countDown();
    }

    boolean backingOff() {
        return !backoffRemaining().isZero();
    }

    Duration backoffRemaining() {
        long until = backingOffUntilMs;
        return until == 0 ? Duration.ZERO : Duration.ofMillis(Math.max(0, until - clockMs.getAsLong()));
    }

    /** Failures of the current series; 0 once the latest replacement has run longer than the longest wait. */
    synchronized int consecutiveFailures() {
        boolean seriesOver = backingOffUntilMs == 0 && lastReplacedAtMs != Long.MIN_VALUE
                && clockMs.getAsLong() - lastReplacedAtMs > backoff.max().toMillis();
        return seriesOver ? 0 : failuresInARow;
    }

    /** The cause of the latest failure, or null before any. */
    Cause lastCause() {
        return lastCause;
    }
}
