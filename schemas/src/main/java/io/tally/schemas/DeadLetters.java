package io.tally.schemas;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.header.Headers;

/**
 * The headers of a record on either dead-letter topic ({@code transactions.dlq}, {@code bucket-updates.dlq}): why
 * it was rejected and where it came from, so a person can find the original and replay it after a fix. The value
 * (and key) stay the original bytes, untouched. One vocabulary for both topics, so one alert, one dashboard and one
 * {@code kafka-console-consumer --property print.headers=true} read both.
 */
public final class DeadLetters {
    /** A {@link Reason} name: a stable code for alerting and triage. */
    public static final String REASON = "tally.dlq.reason";
    /** What exactly is wrong, for a person: the offending field, or the service's message (at most 1,000 characters). */
    public static final String MESSAGE = "tally.dlq.message";
    public static final String SOURCE_TOPIC = "tally.dlq.source.topic";
    public static final String SOURCE_PARTITION = "tally.dlq.source.partition";
    public static final String SOURCE_OFFSET = "tally.dlq.source.offset";
    /** When the record was rejected (the processing clock, ISO-8601). */
    public static final String TIME = "tally.dlq.time";
    /** {@link Reason#COSMOS_REFUSED} only: the HTTP status and sub-status Cosmos answered. */
    public static final String COSMOS_STATUS = "tally.dlq.cosmos.status";
    public static final String COSMOS_SUB_STATUS = "tally.dlq.cosmos.sub-status";

    /** Why a record was dead-lettered. The first six come from stage 1 (transactions.dlq), the last from the sink. */
    public enum Reason {
        /** The bytes are not what the topic carries: not Confluent wire format, unknown schema id, corrupt Avro, or a
         *  bucket update that is not a bucket document. */
        DECODE_FAILED,
        /** A record without a value. */
        EMPTY_VALUE,
        /** Decodes, but a required value is missing or out of range. */
        INVALID,
        /** The event time is further behind the record timestamp than ingest.late-bound.ms. */
        LATE,
        /** The event time is further ahead of the record timestamp than ingest.max-future-skew.ms. */
        FUTURE,
        /** The record's writer schema lacks a field the source mapping or a rule needs, or has it with a type that cannot
         *  serve (the message names each path and the schema id); a producer moved to a schema the rules do not fit. */
        SCHEMA_MISMATCH,
        /** Cosmos refused the document for good (400, 413, 422): see {@link #COSMOS_STATUS}. */
        COSMOS_REFUSED
    }

    /** Where the rejected record was read. */
    public record Source(String topic, int partition, long offset) {}

    static final int MAX_MESSAGE_CHARS = 1000;

    private DeadLetters() {}

    /** Sets reason, message, source (when known) and time, replacing those a record re-sent from a DLQ still carries. */
    public static void describe(Headers headers, Reason reason, String message, Source source, Instant now) {
        put(headers, REASON, reason.name());
        String m = message == null ? "" : message;
        put(headers, MESSAGE, m.length() > MAX_MESSAGE_CHARS ? m.substring(0, MAX_MESSAGE_CHARS) : m);
        if (source != null) {
            put(headers, SOURCE_TOPIC, source.topic());
            put(headers, SOURCE_PARTITION, Integer.toString(source.partition()));
            put(headers, SOURCE_OFFSET, Long.toString(source.offset()));
        }
        put(headers, TIME, now.toString());
    }

    /** Adds the status Cosmos answered to a {@link Reason#COSMOS_REFUSED} dead letter. */
    public static void cosmosStatus(Headers headers, int status, int subStatus) {
        put(headers, COSMOS_STATUS, Integer.toString(status));
        put(headers, COSMOS_SUB_STATUS, Integer.toString(subStatus));
    }

    private static void put(Headers headers, String key, String value) {
        headers.remove(key); // a record re-sent from the DLQ must not carry two reasons
        headers.add(key, value.getBytes(StandardCharsets.UTF_8));
    }
}
