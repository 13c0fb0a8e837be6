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
 *       interval on purpose: a window spans several commits and keeps only the newest value of each bucket.</li>
 * </ul>
 *
 * <p>The remaining quarter or so is for the transactions' commits, the sink's bulk call and the read.
 * {@code ./tally bench freshness-cost} measures documents and request units per event and the freshness p99
 * at 0.25, 1, 5 and 30 s, against the ideal of each bucket written once per window in which it changed.
 */
public record FreshnessTarget(Duration target) {

    public static final Setting<Duration> TARGET = Setting.millis("ingest.freshness-target.ms", 1000,
            "How long an event may take from Kafka to Cosmos when the pipeline keeps up: the one knob between freshness and "
                    + "Cosmos cost. Longer targets write each changed bucket less often (fewer documents and request units per "
                    + "event). The Kafka Streams commit interval (a sixth of it) and the sink's flush window (two fifths) follow "
                    + "from it unless set themselves; docs/benchmarks.md has the measured curve.")
            .validate(d -> d.toMillis() >= 100, "must be >= 100");

    public static final FreshnessTarget DEFAULT = new FreshnessTarget(Duration.ofMillis(1000));

    public static FreshnessTarget from(Config c) {
        return new FreshnessTarget(c.get(TARGET));
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
