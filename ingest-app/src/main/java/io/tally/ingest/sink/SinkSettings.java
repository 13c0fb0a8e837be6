package io.tally.ingest.sink;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Setting;
import io.tally.ingest.freshness.FreshnessTarget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything the Cosmos sink (stages 7-10) reads, declared once and parsed once. Topic names come
 * from {@code topics.prefix}: the sink reads {@code <prefix>bucket-updates} and dead-letters to
 * {@code <prefix>bucket-updates.dlq} ({@code Topics.Names#bucketUpdatesDlq}). Sizing arithmetic
 * for the defaults is in docs/sink.md; the short version is on each setting.
 *
 * @param windowMaxDocuments  distinct documents one write window holds at most (updates of a bucket it holds coalesce freely)
 * @param windowMaxBytes      heap the documents waiting to be written may hold, estimated ({@link Coalescer#bytes})
 * @param catchUpWindow       how long a late bucket waits while the whole stream is behind
 * @param flushWindow         a window is written at the latest this long after its first update
 * @param backlogInFlight     documents written behind (a backfill's, a backlog's) that may be in flight while updates that
 *                            keep up are being read; 0: no bound
 * @param upstreamPause       how long the aggregation's output may pause while it drains a backlog
 *                            ({@link FreshnessTarget#backlogPause()}): no update for longer than that (and the freshness
 *                            margin) is a stream gone quiet
 * @param maxInFlightDocuments documents submitted to Cosmos and not yet durable; at the cap the consumer pauses
 * @param throttleRetriesInSdk 429 retries the SDK makes itself before the sink sees the 429 (0: the sink owns them)
 * @param targetRate          documents per second the concurrency limit is sized for (Little's law, {@link LittleSizer})
 * @param pacing              client-side RU pacing on ({@link RuPacer})
 * @param pacingMinRate       RU/s the pacer never slows below
 */
public record SinkSettings(String groupId, Duration pollTimeout,
                           int windowMaxDocuments, long windowMaxBytes, Duration flushWindow, Duration backlogMaxWindow,
                           Duration catchUpWindow, int backlogInFlight, int maxInFlightDocuments, Duration commitInterval,
                           Duration revokeDrainTimeout, int chunkSize, int microBatchSize, int microBatchConcurrency,
                           int concurrencyInitial, int concurrencyMin, int concurrencyMax, int targetRate,
                           int retryMaxAttempts, Duration retryInitialBackoff, Duration retryMaxBackoff, Duration retryMaxElapsed,
                           int ruBudget, int throttleRetriesInSdk, int metricsPort,
                           boolean pacing, int pacingMinRate, String fleetBudgetControlContainer, Duration upstreamPause) {

    public static final Setting<String> GROUP_ID = Setting.string("sink.group-id", "tally-sink",
            "Consumer group of the Cosmos sink.");
    public static final Setting<Duration> POLL_TIMEOUT = Setting.millis("sink.poll-timeout.ms", 500,
            "How long the sink waits for bucket updates before looking again (also the longest a paused sink waits between checks).");
    public static final Setting<Integer> WINDOW_DOCUMENTS = Setting.integer("sink.window.max-documents", 250_000,
            "Most distinct bucket documents one write window holds (newest ver per bucket id wins); updates of a bucket the "
                    + "window already holds always coalesce into it, so memory follows documents, not updates. A window holds "
                    + "each document as the bytes it arrived in (0.4-0.6 KB measured at 4 to 51 rules; with bookkeeping ~0.85 KB "
                    + "of heap each, ~211 MB at the cap) and is handed to Cosmos in parts as sink.max-in-flight-documents allows, "
                    + "so it may be larger than that cap. Updates that are behind wait (sink.backlog.max-window.ms, "
                    + "sink.backlog.catch-up-window.ms) counted here too: at the cap, or at sink.window.max-bytes, the least "
                    + "recently updated are written until half the cap waits. A drain at many rules touches more distinct "
                    + "documents than a small cap holds, and writes each of them again. Replaces sink.window.max-records, which "
                    + "counted updates.").atLeast(1);
    public static final Setting<Long> WINDOW_BYTES = Setting.longValue("sink.window.max-bytes", 0,
            "Most heap the bucket documents waiting to be written may hold: their bytes plus ~272 bytes each of bookkeeping "
                    + "(within 1% of the heap measured, docs/benchmarks/sink-heap.md). Reached before sink.window.max-documents "
                    + "when documents are large (many grades per entity); then the least recently updated are written until half "
                    + "of it waits; with that half, handed over in parts while the consumer is paused, the sink holds at most 1.5 "
                    + "times this. 0 (default): a quarter of the JVM's maximum heap (256 MiB of -Xmx1g), which leaves the rest "
                    + "for sink.max-in-flight-documents (~5 KB each), the consumer's fetches and, in one process, the "
                    + "aggregation.").atLeast(0);
    public static final Setting<Duration> FLUSH_WINDOW = Setting.millis("sink.flush-window.ms", 0,
            "Each bucket is written at most once per window: an update that keeps up is written at once when its bucket was "
                    + "not written within the last window, else a window after that write, with what came meanwhile (the sink's "
                    + "added latency is at most this). 0 (default): two fifths of ingest.freshness-target.ms.");
    public static final Setting<Duration> BACKLOG_WINDOW = Setting.millis("sink.backlog.max-window.ms", 60_000,
            "Longest a bucket's update waits to be written while it is behind. An update no further behind than twice the "
                    + "freshness target (its record timestamp: when the event it counts was produced) is written within the flush "
                    + "window; one further behind waits as long as it is behind beyond that, at most this, and coalesces with the "
                    + "updates that come meanwhile (while the stream is behind, sink.backlog.catch-up-window.ms instead). Live "
                    + "updates beside a backlog or a backfill go first, and once the stream is fresh again nothing waits longer "
                    + "than its own lag. Producers that stamp records with old event times make the sink see a backlog: lower "
                    + "this for them. 0 = the flush window always (and no catch-up window either).");
    public static final Setting<Integer> BACKLOG_IN_FLIGHT = Setting.integer("sink.backlog.max-in-flight-documents", 100,
            "While updates that keep up are being read, documents written behind them (a rules backfill's history, what waited "
                    + "sink.backlog.max-window.ms) are handed to Cosmos only while fewer than this many of them are in flight, so "
                    + "a live write never queues behind more than this many (at the service, in the RU pacer, in the SDK's "
                    + "batches): live first. While the whole stream is behind, no bound. 0: no bound.").atLeast(0);
    public static final Setting<Duration> CATCH_UP_WINDOW = Setting.millis("sink.backlog.catch-up-window.ms", 300_000,
            "How long a bucket that is behind waits while the whole stream is behind (updates keep coming and none is fresh: "
                    + "a burst the aggregation works through, a catch-up after an outage), so draining "
                    + "a backlog writes a document the drain keeps changing about once per this. Beside fresh updates (a "
                    + "backfill beside live) sink.backlog.max-window.ms bounds the wait instead, and once the stream goes quiet or "
                    + "fresh every bucket goes at its own hold. Below sink.backlog.max-window.ms it changes nothing; "
                    + "sink.backlog.max-window.ms=0 turns both off.");
    public static final Setting<Integer> MAX_IN_FLIGHT = Setting.integer("sink.max-in-flight-documents", 20_000,
            "Documents handed to Cosmos and not yet durable. At the cap the consumer pauses its partitions (backpressure): "
                    + "memory is bounded by this, not by the backlog (measured ~5 KB of heap per in-flight document, most of it "
                    + "the SDK's bulk operation state). A closed window is handed over in parts within it.").atLeast(1);
    public static final Setting<Duration> COMMIT_INTERVAL = Setting.millis("sink.commit-interval.ms", 1000,
            "How often the sink commits each partition's contiguous prefix of durably written updates.");
    public static final Setting<Duration> REVOKE_DRAIN = Setting.millis("sink.revoke-drain-timeout.ms", 10_000,
            "On partition revocation, wait this long for in-flight writes of those partitions; the rest are abandoned "
                    + "(never retried by this instance) before the new owner starts. Must stay below the consumer's "
                    + "max.poll.interval.ms (the wait runs inside poll).");
    public static final Setting<Integer> CHUNK_SIZE = Setting.integer("sink.bulk.chunk-size", 1000,
            "Operations per executeBulkOperations call (sorted by logical partition); one call holds one concurrency permit.").atLeast(1);
    public static final Setting<Integer> MICRO_BATCH = Setting.integer("sink.bulk.micro-batch-size", 100,
            "CosmosBulkExecutionOptions initial and maximum micro-batch size (operations per request to one physical partition; "
                    + "the service caps a batch at 100 operations / 2 MB).").atLeast(1).validate(v -> v <= 100, "must be <= 100");
    public static final Setting<Integer> MICRO_BATCH_CONCURRENCY = Setting.integer("sink.bulk.micro-batch-concurrency", 1,
            "CosmosBulkExecutionOptions max micro-batch concurrency per physical partition (1-5).").atLeast(1)
            .validate(v -> v <= 5, "must be <= 5");
    public static final Setting<Integer> CONCURRENCY_INITIAL = Setting.integer("sink.concurrency.initial", 4,
            "AIMD limit of concurrent bulk calls at start.").atLeast(1);
    public static final Setting<Integer> CONCURRENCY_MIN = Setting.integer("sink.concurrency.min", 1,
            "AIMD limit floor: the limit is halved on throttling or timeouts, never below this.").atLeast(1);
    public static final Setting<Integer> CONCURRENCY_MAX = Setting.integer("sink.concurrency.max", 32,
            "AIMD limit ceiling: the limit grows by one per clean round of bulk calls up to this.").atLeast(1);
    public static final Setting<Integer> TARGET_RATE = Setting.integer("sink.target-rate", 20_000,
            "Documents per second this sink process should be able to write (its catch-up rate). With the observed bulk-call "
                    + "latency it gives the calls needed in flight (Little's law: rate x latency / operations per call); below that "
                    + "the AIMD limit doubles per clean call, unless throttled in the last 10 s or the calls are queueing at the "
                    + "endpoint, still within sink.concurrency.max and sink.max-in-flight-documents. Default: 250K updates/s over "
                    + "8 instances, coalesced. 0 = AIMD alone.").atLeast(0);
    public static final Setting<Integer> RETRY_ATTEMPTS = Setting.integer("sink.retry.max-attempts", 12,
            "Attempts of one document (408, 410, 429, 449, 503, ...) before the sink stalls: it then stops taking new "
                    + "updates and committing, and keeps retrying at sink.retry.max-backoff.ms (nothing is dropped).").atLeast(1);
    public static final Setting<Duration> RETRY_INITIAL = Setting.millis("sink.retry.initial-backoff.ms", 100,
            "First retry delay; doubles per attempt, full jitter, at least the server's x-ms-retry-after-ms.");
    public static final Setting<Duration> RETRY_MAX = Setting.millis("sink.retry.max-backoff.ms", 5000,
            "Longest retry delay (before jitter).");
    public static final Setting<Duration> RETRY_ELAPSED = Setting.millis("sink.retry.max-elapsed.ms", 60_000,
            "Time a document may spend retrying before the sink stalls (see sink.retry.max-attempts).");
    public static final Setting<Integer> RU_BUDGET = Setting.integer("sink.ru-budget", 0,
            "Request units per second the sink may use (SDK local throughput control group), leaving the rest to reads; "
                    + "0 = no limit. Per sink process (divide the container's share by the number of sink instances), or for all "
                    + "sinks together with sink.ru-budget.fleet-control-container.").atLeast(0);
    public static final Setting<String> FLEET_BUDGET = Setting.optionalString("sink.ru-budget.fleet-control-container", "",
            "Empty (default): sink.ru-budget is each sink process's own. A container name: sink.ru-budget is the budget of every "
                    + "sink of sink.group-id together. Each sink paces itself to the budget's share of the partitions it owns (a "
                    + "rebalance moves a dead sink's share with its partitions), under the Cosmos SDK's global throughput control, "
                    + "whose members keep lease items in this container (same database, partition key /groupId, created with the "
                    + "bucket container when cosmos.create-if-missing is on; items expire after 11 s, renewed every 5 s).");
    public static final Setting<Integer> SDK_THROTTLE_RETRIES = Setting.integer("sink.sdk-throttle-retries", 0,
            "429 retries the SDK makes inside bulk before the sink sees them. 0 (default): the sink owns throttling, so every "
                    + "429 reaches its pacer (sink.pacing.enabled; the AIMD limiter when pacing is off) and is retried once, by the sink, "
                    + "after x-ms-retry-after-ms.").atLeast(0);
    public static final Setting<Integer> METRICS_PORT = Setting.integer("sink.metrics.port", 9464,
            "Port of the Prometheus endpoint (GET /metrics) on all interfaces; 0 = any free port, -1 = off.").atLeast(-1);
    public static final Setting<Boolean> PACING = Setting.bool("sink.pacing.enabled", true,
            "Pace bulk calls, first attempts and retries, with a token bucket in request units fed by the charges Cosmos "
                    + "reports, so an RU budget below demand is spent across each second instead of bursting into 429s. The rate "
                    + "starts at sink.ru-budget (its ceiling) or, when that is 0, is learned: at the first 429, 0.97 x the RU/s "
                    + "charged in the last second; at each later one, 0.97 x the share of the rate the service admitted; growing "
                    + "while no 429 comes. false = AIMD and retry-after alone.");
    public static final Setting<Integer> PACING_MIN_RATE = Setting.integer("sink.pacing.min-rate", 1000,
            "RU/s the pacer never slows below (see sink.pacing.enabled), unless sink.ru-budget (or the sink's share of a fleet's) "
                    + "is lower: a 429 that is not about the budget (injected, another client's burst) cannot stop the sink; from here "
                    + "the rate grows back by a quarter per second.").atLeast(1);

    public static final List<Setting<?>> ALL = List.of(GROUP_ID, POLL_TIMEOUT, WINDOW_DOCUMENTS, WINDOW_BYTES, FLUSH_WINDOW, BACKLOG_WINDOW, CATCH_UP_WINDOW,
            BACKLOG_IN_FLIGHT, MAX_IN_FLIGHT, COMMIT_INTERVAL, REVOKE_DRAIN, CHUNK_SIZE, MICRO_BATCH, MICRO_BATCH_CONCURRENCY, CONCURRENCY_INITIAL,
            CONCURRENCY_MIN, CONCURRENCY_MAX, TARGET_RATE, RETRY_ATTEMPTS, RETRY_INITIAL, RETRY_MAX, RETRY_ELAPSED, RU_BUDGET,
            SDK_THROTTLE_RETRIES, METRICS_PORT, FLEET_BUDGET,
            PACING, PACING_MIN_RATE);

    /** Cross-field checks; every problem is listed at once. */
    public SinkSettings {
        List<String> problems = new ArrayList<>();
        if (flushWindow.isZero()) {
            problems.add(FLUSH_WINDOW.key() + " must be resolved (> 0) before the settings are built");
        }
        if (concurrencyMin > concurrencyMax || concurrencyInitial < concurrencyMin || concurrencyInitial > concurrencyMax) {
            problems.add("need " + CONCURRENCY_MIN.key() + " <= " + CONCURRENCY_INITIAL.key() + " <= " + CONCURRENCY_MAX.key()
                    + " (" + concurrencyMin + ", " + concurrencyInitial + ", " + concurrencyMax + ")");
        }
        if (retryInitialBackoff.isZero() || retryMaxBackoff.compareTo(retryInitialBackoff) < 0) {
            problems.add(RETRY_MAX.key() + " must be >= " + RETRY_INITIAL.key() + " > 0");
        }
        if (retryMaxElapsed.compareTo(retryMaxBackoff) < 0) {
            problems.add(RETRY_ELAPSED.key() + " must be >= " + RETRY_MAX.key());
        }
        if (chunkSize < microBatchSize) {
            problems.add(CHUNK_SIZE.key() + " (" + chunkSize + ") must be >= " + MICRO_BATCH.key() + " (" + microBatchSize + ")");
        }
        if (windowMaxBytes <= 0) {
            problems.add(WINDOW_BYTES.key() + " must be resolved (> 0) before the settings are built");
        }
        if (!fleetBudgetControlContainer.isEmpty() && ruBudget == 0) {
            problems.add(FLEET_BUDGET.key() + " shares sink.ru-budget across the fleet: set " + RU_BUDGET.key() + " > 0 too");
        }
        if (!problems.isEmpty()) throw new ConfigException(problems);
    }

    /** With the flush window {@link FreshnessTarget#DEFAULT} gives when {@code sink.flush-window.ms} is 0. */
    public static SinkSettings from(Config c) {
        return from(c, FreshnessTarget.DEFAULT);
    }

    /** With the flush window {@code freshness} gives when {@code sink.flush-window.ms} is 0. */
    public static SinkSettings from(Config c, FreshnessTarget freshness) {
        Duration window = c.get(FLUSH_WINDOW).isZero() ? freshness.flushWindow() : c.get(FLUSH_WINDOW);
        long windowBytes = c.get(WINDOW_BYTES) == 0 ? Runtime.getRuntime().maxMemory() / 4 : c.get(WINDOW_BYTES);
        return new SinkSettings(c.get(GROUP_ID), c.get(POLL_TIMEOUT), c.get(WINDOW_DOCUMENTS), windowBytes,
                window, c.get(BACKLOG_WINDOW), c.get(CATCH_UP_WINDOW), c.get(BACKLOG_IN_FLIGHT), c.get(MAX_IN_FLIGHT), c.get(COMMIT_INTERVAL), c.get(REVOKE_DRAIN), c.get(CHUNK_SIZE),
                c.get(MICRO_BATCH), c.get(MICRO_BATCH_CONCURRENCY), c.get(CONCURRENCY_INITIAL), c.get(CONCURRENCY_MIN),
                c.get(CONCURRENCY_MAX), c.get(TARGET_RATE), c.get(RETRY_ATTEMPTS), c.get(RETRY_INITIAL), c.get(RETRY_MAX), c.get(RETRY_ELAPSED),
                c.get(RU_BUDGET), c.get(SDK_THROTTLE_RETRIES), c.get(METRICS_PORT),
                c.get(PACING), c.get(PACING_MIN_RATE), c.get(FLEET_BUDGET).trim(), freshness.backlogPause());
    }

    /** The defaults, for tests and tools. */
    public static SinkSettings defaults() {
        return from(Config.load(ALL, List.of(), new String[0], java.util.Map.of()));
    }
}
