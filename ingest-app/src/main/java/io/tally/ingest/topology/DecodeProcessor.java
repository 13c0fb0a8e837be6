package io.tally.ingest.topology;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDecodeException;
import io.tally.schemas.serde.SchemaRegistryException;
import java.time.Instant;
import java.util.Optional;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Stage 1: decodes and validates. A record that cannot be decoded, or decodes to an event that
 * cannot be aggregated, is neither dropped nor allowed to stop the stream: it goes on with its
 * original bytes and dead-letter headers, and the topology routes it to {@code transactions.dlq}.
 *
 * <p>A decoding failure that is not the record's fault (the registry is down or refuses us) is
 * thrown instead: the stream thread is replaced and the record is read again from the last
 * commit, rather than dead-lettering good data during an outage.
 */
public final class DecodeProcessor implements Processor<byte[], byte[], byte[], Decoded> {
    private final Deserializer<TransactionEvent> events;
    private final EventValidator validator;
    private ProcessorContext<byte[], Decoded> context;

    DecodeProcessor(Deserializer<TransactionEvent> events, EventValidator validator) {
        this.events = events;
        this.validator = validator;
    }

    @Override
    public void init(ProcessorContext<byte[], Decoded> context) {
        this.context = context;
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        String topic = context.recordMetadata().map(m -> m.topic()).orElse("unknown");
        if (record.value() == null || record.value().length == 0) {
            reject(record, DeadLetters.Reason.EMPTY_VALUE, "record on " + topic + " has no value");
            return;
        }
        TransactionEvent event;
        try {
            event = events.deserialize(topic, record.value());
        } catch (RuntimeException e) {
            if (notTheRecordsFault(e)) throw e;
            reject(record, DeadLetters.Reason.DECODE_FAILED, String.valueOf(e.getMessage()));
            return;
        }
        Optional<EventValidator.Rejection> rejection = validator.check(event, record.timestamp());
        if (rejection.isPresent()) {
            reject(record, rejection.get().reason(), rejection.get().message());
            return;
        }
        context.forward(record.withValue(Decoded.ok(event)));
    }

    /** True when a decoding failure is the registry's (down, refusing us), not the record's: retry, never dead-letter. */
    public static boolean notTheRecordsFault(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AvroDecodeException d) return !d.isBadInput();
            if (t instanceof SchemaRegistryException r) return r.isRetriable();
        }
        return false;
    }

    private void reject(Record<byte[], byte[]> record, DeadLetters.Reason reason, String message) {
        Record<byte[], Decoded> out = record.withValue(Decoded.rejected(record.value()));
        DeadLetters.describe(out.headers(), reason, message, context.recordMetadata().orElse(null),
                Instant.ofEpochMilli(context.currentSystemTimeMs()));
        context.forward(out);
    }
}
