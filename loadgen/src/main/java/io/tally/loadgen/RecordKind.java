package io.tally.loadgen;

import java.util.Optional;

/**
 * What a generated record is meant to exercise, and the dead-letter reason the pipeline is expected to
 * give it. The ground truth does not trust these labels: it classifies every record from its content and
 * its Kafka timestamp ({@link io.tally.loadgen.truth.GroundTruth}); the labels drive generation and the
 * "intended vs. seen" part of the summary.
 */
public enum RecordKind {
    /** A well-formed event inside the accepted time range. */
    VALID(null),
    /** An exact repeat of an earlier VALID record (same transaction id, same bytes): counts once. */
    DUPLICATE(null),
    /** Event time older than every rule's retention. */
    LATE("LATE"),
    /** Event time further ahead than the allowed skew. */
    FUTURE("FUTURE"),
    /**
     * Decodes, but a required value is missing or wrong: an empty transactionId, customerId or domain; for
     * an order an empty orderId or shop, a negative amount or a currency that is not ISO 4217.
     */
    INVALID("INVALID"),
    /** Bytes that do not decode as the topic's schema (TransactionEvent, or OrderEvent on the orders topic). */
    MALFORMED("DECODE_FAILED"),
    /** Read from a recording: what it exercises is only known from its content (the ground truth decides). */
    REPLAYED(null);

    private final String dlqReason;

    RecordKind(String dlqReason) {
        this.dlqReason = dlqReason;
    }

    /** The reason header the pipeline's DLQ should carry for this kind, if it goes there. */
    public Optional<String> dlqReason() {
        return Optional.ofNullable(dlqReason);
    }
}
