package io.tally.ingest.app;

import io.tally.config.Config;
import io.tally.config.Setting;
import io.tally.rules.GradeRules;
import io.tally.rules.source.Sources;
import io.tally.ingest.topology.TopologySettings;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;

/** Settings of the aggregation role (stages 1-6), parsed once. */
public record AggregationSettings(String rulesLocation, String sourcesLocation, TopologySettings topology, int streamThreads, int standbyReplicas,
                                  StreamRestarts.Backoff restartBackoff, Duration rulesWatchInterval, Duration rulesSwitchMargin) {

    public static final Setting<String> RULES = Setting.string("ingest.rules.file", GradeRules.BUILTIN_DEFAULT,
            "Grade rules (YAML or JSON). The default is the rule set shipped in the jar, rules/default-rules.yaml.");
    public static final Setting<String> SOURCES = Setting.string("ingest.sources.file", Sources.BUILTIN_DEFAULT,
            "Event sources (YAML or JSON): which topics to read and where in each event the transaction id, event time, domain, "
                    + "amount and the rules' fields are (docs/sources.md). The default is rules/default-sources.yaml, shipped in the "
                    + "jar: Tally's TransactionEvent on the topic transactions.");
    public static final Setting<Duration> DEDUPE_HORIZON = Setting.millis("ingest.dedupe.horizon.ms", Duration.ofDays(7).toMillis(),
            "How long a transaction id is remembered: duplicates arriving within it count once (7 days).");
    public static final Setting<Duration> MAX_FUTURE_SKEW = Setting.millis("ingest.max-future-skew.ms", Duration.ofMinutes(5).toMillis(),
            "Events whose time is further ahead of their Kafka record timestamp go to the DLQ as FUTURE (5 minutes).");
    public static final Setting<Duration> LATE_BOUND = Setting.millis("ingest.late-bound.ms", Duration.ofDays(35).toMillis(),
            "Events older than their Kafka record timestamp by more than this go to the DLQ as LATE (35 days, the longest default retention).");
    public static final Setting<String> MAX_AMOUNT = Setting.string("ingest.max-amount", "1000000000",
            "Largest accepted amount; larger (and negative) amounts go to the DLQ as INVALID.")
            .validate(v -> { try { return new BigDecimal(v).signum() > 0; } catch (NumberFormatException e) { return false; } },
                    "must be a positive decimal");
    public static final Setting<Integer> THREADS = Setting.integer("ingest.num-stream-threads", 1,
            "Kafka Streams threads in this process; more instances scale further (partitions are shared among all).").atLeast(1);
    public static final Setting<Integer> STANDBYS = Setting.integer("ingest.num-standby-replicas", 0,
            "Warm copies of each state store on other instances, for fast failover when running several instances.").atLeast(0);
    /**
     * Kafka Streams settings ingest-app chooses differently from Kafka Streams' defaults; {@code kafka.*} settings
     * override them. No record cache: no store is cached, stages 3 and 5 hold what changed within a commit interval
     * themselves (TallyTopology). Producer batches of 256 KB instead of 16 KB with a 20 ms linger: every commit
     * flushes the producer anyway, and fewer, larger batches cost the stream thread and the broker less per record
     * (./tally bench aggregation, knobs table: Kafka Streams' 16 KB / 100 ms ran at 0.94x the events/s and 1.15x the
     * CPU per event; an earlier run of the same comparison gave 1.18x and 0.66x the other way; load average 2-3).
     * Consumer fetches of up to 8 MB per partition instead of 1 MB: with a backlog the stream thread spent 15-17 % of
     * its time waiting for fetch responses at 1 MB (the bench's thread table, consumer io-wait); at 8 MB it ran at
     * 1.31x the events/s (./tally bench aggregation, knobs table, load average 1.5-2.2). A fetch response stays capped
     * by fetch.max.bytes (50 MB), so a thread buffers at most that much more; without a backlog fetches are as small
     * as before. Polling 10,000 records instead of 1,000 made no difference (same table) and is left alone.
     */
    public static final Map<String, Object> STREAMS_DEFAULTS = Map.of(
            StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L,
            StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), 256 * 1024,
            StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 20,
            StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG), 8 * 1024 * 1024);

    public static final Setting<Duration> RESTART_INITIAL = Setting.millis("ingest.restart-backoff.initial.ms", 1000,
            "Wait before a failed Kafka Streams thread is replaced; doubles with each failure in a row (the schema registry down, say) up to ingest.restart-backoff.max.ms.")
            .validate(d -> !d.isZero(), "must be > 0");
    public static final Setting<Duration> RESTART_MAX = Setting.millis("ingest.restart-backoff.max.ms", 30_000,
            "Longest wait before a failed Kafka Streams thread is replaced; a replacement that runs this long without failing ends the series.")
            .validate(d -> !d.isZero(), "must be > 0");

    public static final Setting<Duration> RULES_WATCH = Setting.millis("ingest.rules.watch-interval.ms", 10_000,
            "How often a running aggregation reads the deployment's rules record (one point read); when a newer generation was "
                    + "applied it stops, so it can be restarted with the applied rules (README.md, Rules that change).")
            .validate(d -> !d.isZero(), "must be > 0");
    public static final Setting<Duration> RULES_SWITCH_MARGIN = Setting.millis("ingest.rules.switch-margin.ms", 60_000,
            "./tally rules apply puts the seam of added and changed grades this long after every instance on the old rules has "
                    + "had to stop: apply time + ingest.max-future-skew.ms + ingest.rules.watch-interval.ms + this, rounded up to "
                    + "the second. Covers an instance's shutdown and clock differences between hosts.")
            .validate(d -> !d.isNegative(), "must be >= 0");

    public static final List<Setting<?>> ALL = List.of(RULES, SOURCES, DEDUPE_HORIZON, MAX_FUTURE_SKEW, LATE_BOUND, MAX_AMOUNT,
            THREADS, STANDBYS, RESTART_INITIAL, RESTART_MAX, RULES_WATCH, RULES_SWITCH_MARGIN);

    /** How long after an apply the seam of its added and changed grades falls at the earliest ({@link #RULES_SWITCH_MARGIN}). */
    public Duration rulesSwitchDelay() {
        return topology.maxFutureSkew().plus(rulesWatchInterval).plus(rulesSwitchMargin);
    }

    AggregationSettings withTopology(TopologySettings t) {
        return new AggregationSettings(rulesLocation, sourcesLocation, t, streamThreads, standbyReplicas, restartBackoff,
                rulesWatchInterval, rulesSwitchMargin);
    }

    static AggregationSettings from(Config c) {
        return new AggregationSettings(c.get(RULES), c.get(SOURCES),
                new TopologySettings(c.get(DEDUPE_HORIZON), c.get(MAX_FUTURE_SKEW), c.get(LATE_BOUND), new BigDecimal(c.get(MAX_AMOUNT))),
                c.get(THREADS), c.get(STANDBYS), new StreamRestarts.Backoff(c.get(RESTART_INITIAL), c.get(RESTART_MAX)),
                c.get(RULES_WATCH), c.get(RULES_SWITCH_MARGIN));
    }
}
