package io.tally.schemas;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The topics every part of Tally agrees on, with the partitions and configs they are created with: the one list.
 * ingest-app creates missing topics from it and refuses to start on a misconfigured one; its {@code topics}
 * command ({@code ./tally topics}) does the same for the local stack and docker-compose.yml. The headers of the two
 * dead-letter topics are {@link DeadLetters}.
 */
public final class Topics {
    /** Avro TransactionEvents in the Confluent wire format, keyed by customer id. */
    public static final String TRANSACTIONS = "transactions";
    /** Records that could not be decoded or validated, raw bytes plus reason headers. */
    public static final String TRANSACTIONS_DLQ = "transactions.dlq";
    /** Absolute bucket values, compacted, key = {@code pk|id}. */
    public static final String BUCKET_UPDATES = "bucket-updates";
    /** Bucket updates the sink cannot write (Cosmos refuses them for good, or they do not decode), with reason headers. */
    public static final String BUCKET_UPDATES_DLQ = "bucket-updates.dlq";

    private static final String THIRTY_DAYS_MS = Long.toString(30L * 24 * 3600 * 1000);

    /**
     * A topic as Tally creates it.
     *
     * @param required config keys whose values are essential: a topic that differs stops the start
     *                 (a non-compacted bucket-updates would lose the latest value of quiet buckets)
     */
    public record TopicSpec(String name, int partitions, Map<String, String> configs, Set<String> required) {}

    /**
     * Six partitions: one per stream task, enough for two instances with three threads each; more
     * partitions allow more instances later, never fewer. Thirty days of input allow a replay of
     * the longest default retention (35 days minus a few days' margin is covered by the buckets).
     */
    public static List<TopicSpec> specs(Names names) {
        return List.of(
                new TopicSpec(names.transactions(), 6, Map.of("retention.ms", THIRTY_DAYS_MS), Set.of()),
                new TopicSpec(names.transactionsDlq(), 3, Map.of("retention.ms", THIRTY_DAYS_MS), Set.of()),
                new TopicSpec(names.bucketUpdates(), 6, Map.of("cleanup.policy", "compact"), Set.of("cleanup.policy")),
                new TopicSpec(names.bucketUpdatesDlq(), 3, Map.of("retention.ms", THIRTY_DAYS_MS), Set.of()));
    }

    /**
     * The topic names of one deployment: the standard names behind an optional prefix, so several
     * environments (or tests) can share a cluster without reading each other's records.
     */
    public record Names(String transactions, String transactionsDlq, String bucketUpdates, String bucketUpdatesDlq) {
        public static final Names DEFAULT = withPrefix("");

        public static Names withPrefix(String prefix) {
            return new Names(prefix + TRANSACTIONS, prefix + TRANSACTIONS_DLQ, prefix + BUCKET_UPDATES, prefix + BUCKET_UPDATES_DLQ);
        }
    }

    private Topics() {}
}
