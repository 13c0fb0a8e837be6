package io.tally.loadgen;

import io.tally.schemas.avro.TransactionEvent;

/**
 * One record on its way to Kafka: what it is, when it is due, its key, and its value bytes once
 * encoded. Valid and broken records share this type so they go through one checked send pipeline.
 *
 * @param sequence     0-based position in the stream
 * @param kind         what the record is meant to exercise
 * @param destination  which topic, and so which schema, carries the event
 * @param key          the Kafka key (the customer id, as both topics are keyed), may be empty
 * @param event        the logical event the value encodes (for ORDERS as an OrderEvent), or for MALFORMED
 *                     records the event that was corrupted (never to be counted); null only for records
 *                     read back without an event
 * @param malformation how the encoding is corrupted, for MALFORMED records; null otherwise
 * @param dueNanos     when the record is due, in nanoseconds after the first send
 * @param value        the wire bytes; null until {@link RecordEncoder} has run
 */
public record OutgoingRecord(long sequence, RecordKind kind, Destination destination, String key, TransactionEvent event,
                             Malformer.Malformation malformation, long dueNanos, byte[] value) {

    public OutgoingRecord withValue(byte[] bytes) {
        return new OutgoingRecord(sequence, kind, destination, key, event, malformation, dueNanos, bytes);
    }
}
