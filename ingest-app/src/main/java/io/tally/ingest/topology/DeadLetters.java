package io.tally.ingest.topology;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Headers of a record on {@code transactions.dlq}: why it was rejected and where it came from, so a
 * person can find the original and replay it after a fix. The value is the original bytes, untouched.
 */
public final class DeadLetters {
    public static final String REASON = "tally.dlq.reason";
    public static final String MESSAGE = "tally.dlq.message";
    public static final String SOURCE_TOPIC = "tally.dlq.source.topic";
    public static final String SOURCE_PARTITION = "tally.dlq.source.partition";
    public static final String SOURCE_OFFSET = "tally.dlq.source.offset";
    public static final String TIME = "tally.dlq.time";

    /** Reason codes: stable strings for alerting and triage. */
    public enum Reason { DECODE_FAILED, EMPTY_VALUE, INVALID, LATE, FUTURE }

    private static final int MAX_MESSAGE_CHARS = 1000;

    private DeadLetters() {}

    static void describe(Headers headers, Reason reason, String message, RecordMetadata source, Instant now) {
        put(headers, REASON, reason.name());
        put(headers, MESSAGE, message.length() > MAX_MESSAGE_CHARS ? message.substring(0, MAX_MESSAGE_CHARS) : message);
        if (source != null) {
            put(headers, SOURCE_TOPIC, source.topic());
            put(headers, SOURCE_PARTITION, Integer.toString(source.partition()));
            put(headers, SOURCE_OFFSET, Long.toString(source.offset()));
        }
        put(headers, TIME, now.toString());
    }

    private static void put(Headers headers, String key, String value) {
        headers.remove(key); // a record re-sent from the DLQ must not carry two reasons
        headers.add(key, value.getBytes(StandardCharsets.UTF_8));
    }
}
