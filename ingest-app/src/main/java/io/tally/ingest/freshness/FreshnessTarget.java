package io.tally.ingest.freshness;

import io.tally.config.Config;
import io.tally.config.Setting;
import java.time.Duration;

/**
 * The one knob between freshness and Cosmos cost: how long after it is produced an event may take to be
 * visible in Cosmos when the pipeline keeps up. The intervals that hold updates back follow from it:
 *
 * <ul>
 *   <li>the Kafka Streams commit interval: stage 3 holds an entity's deltas until a commit and stage 5 holds
 *       the changed buckets until the next one (the repartition topic is read committed in between), so an
 *       event waits up to two intervals, a sixth of the target each;</li>
 *   <li>the sink's flush window, two fifths of the target: the sink writes a bucket at most once per window,
 *       so the window, not the commit interval, is what saves request units. It is longer than the commit
 *       interval on purpose: a window spans several commits and keeps only the newest value of each bucket.
 *       A bucket not written within the last window is written at once, so the window delays only busy ones.</li>
 * </ul>
 *
 * <p>The remaining quarter or so is for the transactions' commits, the sink's bulk call and the read.
 * {@code ./tally bench freshness-cost} measures documents and request units per event and the freshness p99
 * at 0.25, 1, 5 and 30 s, against the ideal of each bucket written once per window in which it changed.
 */
public record FreshnessTarget(Duration target, Duration backlogCommitInterval) {

    public static final Setting<Duration> TARGET = Setting.millis("ingest.freshness-target.ms", 1000,
            "How long an event may take from Kafka to Cosmos when the pipeline keeps up: the one knob between freshness and "
                    + "Cosmos cost. Longer targets write each changed bucket less often (fewer documents and request units per "
                    + "event). The Kafka Streams commit interval (a sixth of it) and the sink's flush window (two fifths) follow "
                    + "from it unless set themselves; docs/benchmarks.md has the measured curve.")
            .validate(d -> d.toMillis() >= 100, "must be >= 100");

    public static final Setting<Duration> BACKLOG_COMMIT_INTERVAL = Setting.millis("ingest.backlog.commit-interval.ms", 3000,
            "Kafka Streams commit interval while the aggregation is behind (the newest record a task took since its last "
                    + "commit is older than twice ingest.freshness-target.ms, by its Kafka timestamp): a busy bucket is emitted once "
                    + "per interval instead of once per ingest.commit-interval.ms, so a backlog costs the stream thread, the broker "
                    + "and the sink that many fewer copies of it. At or below ingest.commit-interval.ms: one interval for both. Keep "
                    + "it well under the producer's transaction.timeout.ms (10 s under exactly-once): a transaction stays open for "
                    + "about this long plus its commit.")
            .validate(d -> d.toMillis() < 10_000, "must be < 10000 (the transaction timeout)");

    public static final FreshnessTarget DEFAULT = new FreshnessTarget(Duration.ofMillis(1000));

    /** With the default backlog commit interval. */
    public FreshnessTarget(Duration target) {
        this(target, Duration.ofMillis(Long.parseLong(BACKLOG_COMMIT_INTERVAL.defaultValue().orElseThrow())));
    }

    public static FreshnessTarget from(Config c) {
        return new FreshnessTarget(c.get(TARGET), c.get(BACKLOG_COMMIT_INTERVAL));
    }

    /**
     * How old the newest record may be for the pipeline to count as keeping up: twice the target, the sink's margin for
     * a late bucket too (five flush windows at the default split).
     */
    public Duration behindAfter() {
        return target.multipliedBy(2);
    }

    /**
     * How long the aggregation's output may pause while it drains a backlog: a backlog commit interval, then a commit
     * that takes about as long again at many rules (up to 2.4 s measured at 51 rules). The sink must not take a pause
     * that short for the end of the stream.
     */
    public Duration backlogPause() {
        return backlogCommitInterval.multipliedBy(2);
    }

    /** Kafka Streams' commit interval: each of stages 3 and 5 holds what changed for up to one. */
    public Duration commitInterval() {
        return Duration.ofMillis(target.toMillis() / 6);
    }

    /** The sink's flush window: each bucket is written at most once per window. */
    public Duration flushWindow() {
        return Duration.ofMillis(target.toMillis() * 2 / 5);
    }
}
