package io.tally.schemas;

/**
 * The topics every part of Tally agrees on. Partition counts and configs are provisioned by the
 * local stack (local/kafka/topics.conf) and, in production, by whoever owns the cluster.
 */
public final class Topics {
    /** Avro TransactionEvents in the Confluent wire format, keyed by customer id. */
    public static final String TRANSACTIONS = "transactions";
    /** Records that could not be decoded or validated, raw bytes plus reason headers. */
    public static final String TRANSACTIONS_DLQ = "transactions.dlq";
    /** Absolute bucket values, compacted, key = {@code pk|id}. */
    public static final String BUCKET_UPDATES = "bucket-updates";

    private Topics() {}
}
