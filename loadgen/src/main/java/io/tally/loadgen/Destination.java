package io.tally.loadgen;

/**
 * Which stream a record belongs to, and so its topic and its schema. A logical event is the same
 * whichever destination carries it: the ground truth counts it alike.
 */
public enum Destination {
    /** {@code TransactionEvent} on {@code loadgen.topic}: Tally's own format. */
    TRANSACTIONS,
    /** {@code OrderEvent} on {@code loadgen.orders.topic}: a foreign, nested format Tally reads through a source mapping. */
    ORDERS
}
