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

    /** The topics of a deployment whose only event topic is {@code transactions} (the shipped sources). */
    public static List<TopicSpec> specs(Names names) {
        return specs(names, List.of(names.transactions()));
    }

    /**
     * The event topics (full names, as the sources file lists them) and Tally's own. Six partitions: one per stream
     * task, enough for two instances with three threads each; more partitions allow more instances later, never
     * fewer. Thirty days of input allow a replay of the longest default retention (35 days minus a few days' margin
     * is covered by the buckets). An event topic that exists is used as it is: its partitions and configs are its
     * producers' business.
     */
    public static List<TopicSpec> specs(Names names, List<String> eventTopics) {
        List<TopicSpec> out = new java.util.ArrayList<>();
        for (String t : eventTopics) out.add(new TopicSpec(t, 6, Map.of("retention.ms", THIRTY_DAYS_MS), Set.of()));
        out.add(new TopicSpec(names.transactionsDlq(), 3, Map.of("retention.ms", THIRTY_DAYS_MS), Set.of()));
        out.add(new TopicSpec(names.bucketUpdates(), 6, Map.of("cleanup.policy", "compact"), Set.of("cleanup.policy")));
        out.add(new TopicSpec(names.bucketUpdatesDlq(), 3, Map.of("retention.ms", THIRTY_DAYS_MS), Set.of()));
        return List.copyOf(out);
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

        /**
         * The prefix in front of the event topics a sources file names: the one in front of {@code transactions} (a
         * benchmark may give each round its own internal topics over one shared input).
         */
        public String prefix() {
            return transactions.endsWith(TRANSACTIONS) ? transactions.substring(0, transactions.length() - TRANSACTIONS.length()) : "";
        }
    }

    private Topics() {}
}
