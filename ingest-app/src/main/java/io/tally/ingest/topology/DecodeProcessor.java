package io.tally.ingest.topology;

import io.tally.schemas.avro.TransactionEvent;
import java.time.Instant;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Stage 1: turns raw bytes into events. A record that cannot be decoded is not dropped and does not
 * stop the stream: it goes on with its original bytes and dead-letter headers, and the topology
 * routes it to {@code transactions.dlq}.
 */
final class DecodeProcessor implements Processor<byte[], byte[], byte[], Decoded> {
    private final Deserializer<TransactionEvent> events;
    private ProcessorContext<byte[], Decoded> context;

    DecodeProcessor(Deserializer<TransactionEvent> events) {
        this.events = events;
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
        } catch (RuntimeException e) { // SerializationException, registry errors, Avro resolution errors
            reject(record, DeadLetters.Reason.DECODE_FAILED, String.valueOf(e.getMessage()));
            return;
        }
        context.forward(record.withValue(Decoded.ok(event)));
    }

    private void reject(Record<byte[], byte[]> record, DeadLetters.Reason reason, String message) {
        Record<byte[], Decoded> out = record.withValue(Decoded.rejected(record.value()));
        DeadLetters.describe(out.headers(), reason, message, context.recordMetadata().orElse(null), Instant.now());
        context.forward(out);
    }
}
