package io.tally.ingest.topology;

import io.tally.schemas.DeadLetters;
import java.time.Instant;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Stage 1 as a processor: a record that cannot be decoded, or decodes to an event that cannot be
 * aggregated ({@link EventIntake}), is neither dropped nor allowed to stop the stream: it goes on with
 * its original bytes and dead-letter headers, and the topology routes it to {@code transactions.dlq}.
 * A failure that is not the record's fault is thrown: the stream thread is replaced and the record is
 * read again from the last commit.
 */
public final class DecodeProcessor implements Processor<byte[], byte[], byte[], Decoded> {
    private final EventIntake intake;
    private ProcessorContext<byte[], Decoded> context;

    DecodeProcessor(EventIntake intake) {
        this.intake = intake;
    }

    @Override
    public void init(ProcessorContext<byte[], Decoded> context) {
        this.context = context;
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        String topic = context.recordMetadata().map(m -> m.topic()).orElse("unknown");
        EventIntake.Outcome outcome = intake.judge(topic, record.value(), record.timestamp());
        if (outcome.accepted()) {
            context.forward(record.withValue(Decoded.ok(outcome.event())));
            return;
        }
        Record<byte[], Decoded> out = record.withValue(Decoded.rejected(record.value()));
        DeadLetters.describe(out.headers(), outcome.reason(), outcome.message(),
                context.recordMetadata().map(m -> new DeadLetters.Source(m.topic(), m.partition(), m.offset())).orElse(null),
                Instant.ofEpochMilli(context.currentSystemTimeMs()));
        context.forward(out);
    }
}
