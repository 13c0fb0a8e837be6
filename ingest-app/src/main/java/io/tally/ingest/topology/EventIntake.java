package io.tally.ingest.topology;

import io.tally.ingest.source.SourceReader;
import io.tally.rules.source.SourceEvent;
import io.tally.rules.source.SourcePlan;
import io.tally.schemas.DeadLetters;
import io.tally.schemas.serde.AvroDecodeException;
import io.tally.schemas.serde.SchemaRegistryException;

/**
 * Stage 1's decision for one input record, shared by the live topology ({@link DecodeProcessor}) and
 * replay: decode (Confluent wire format, Avro, the writer schema of the record's id) and read the values its source
 * maps ({@link SourceReader}), then validate ({@link EventValidator}), judged against the record timestamp so both
 * classify every record alike.
 *
 * <p>A decoding failure that is not the record's fault (the registry is down or refuses us) is thrown,
 * never returned as a rejection: dead-lettering good data during an outage would lose it.
 */
public final class EventIntake {
    /** An accepted event, or the reason and message of a rejection. */
    public record Outcome(SourceEvent event, DeadLetters.Reason reason, String message) {
        public boolean accepted() {
            return event != null;
        }
    }

    private final SourceReader events;
    private final EventValidator validator;

    public EventIntake(SourceReader events, EventValidator validator) {
        this.events = events;
        this.validator = validator;
    }

    public Outcome judge(String topic, byte[] value, long recordTimestampMs) {
        if (value == null || value.length == 0) {
            return new Outcome(null, DeadLetters.Reason.EMPTY_VALUE, "record on " + topic + " has no value");
        }
        SourcePlan.Read read;
        try {
            read = events.read(topic, value);
        } catch (RuntimeException e) {
            if (notTheRecordsFault(e)) throw e;
            return new Outcome(null, DeadLetters.Reason.DECODE_FAILED, String.valueOf(e.getMessage()));
        }
        if (read.event() == null) return new Outcome(null, read.reason(), read.message());
        SourceEvent event = read.event();
        return validator.check(event, recordTimestampMs)
                .map(r -> new Outcome(null, r.reason(), r.message()))
                .orElseGet(() -> new Outcome(event, null, null));
    }

    /** True when a decoding failure is the registry's (down, refusing us), not the record's: retry, never dead-letter. */
    public static boolean notTheRecordsFault(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AvroDecodeException d) return !d.isBadInput();
            if (t instanceof SchemaRegistryException r) return r.isRetriable();
        }
        return false;
    }
}
