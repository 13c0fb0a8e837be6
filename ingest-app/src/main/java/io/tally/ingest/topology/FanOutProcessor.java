package io.tally.ingest.topology;

import io.tally.schemas.avro.TransactionEvent;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/** Stage 3 as a processor: one record per (event, pk), keyed by pk for the repartition. */
final class FanOutProcessor implements Processor<byte[], TransactionEvent, String, EntityDeltas> {
    private final FanOut fanOut;
    private ProcessorContext<String, EntityDeltas> context;

    FanOutProcessor(FanOut fanOut) {
        this.fanOut = fanOut;
    }

    @Override
    public void init(ProcessorContext<String, EntityDeltas> context) {
        this.context = context;
    }

    @Override
    public void process(Record<byte[], TransactionEvent> record) {
        for (EntityDeltas d : fanOut.deltas(record.value(), record.timestamp())) {
            context.forward(record.withKey(d.pk()).withValue(d));
        }
    }
}
