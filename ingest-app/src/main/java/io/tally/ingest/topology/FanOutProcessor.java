package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import io.tally.schemas.avro.TransactionEvent;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/** Stage 3 as a processor: the retention check measures event age against the record timestamp. */
final class FanOutProcessor implements Processor<byte[], TransactionEvent, String, BucketDocument> {
    private final FanOut fanOut;
    private ProcessorContext<String, BucketDocument> context;

    FanOutProcessor(FanOut fanOut) {
        this.fanOut = fanOut;
    }

    @Override
    public void init(ProcessorContext<String, BucketDocument> context) {
        this.context = context;
    }

    @Override
    public void process(Record<byte[], TransactionEvent> record) {
        for (KeyValue<String, BucketDocument> d : fanOut.deltas(record.value(), record.timestamp())) {
            context.forward(record.withKey(d.key).withValue(d.value));
        }
    }
}
