package io.tally.ingest.topology;

import io.tally.schemas.avro.TransactionEvent;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Stage 2: forwards the first record of each transaction id and drops later ones seen within the
 * horizon, so producer retries and replays of overlapping history count once.
 *
 * <p>The store maps transaction id to the record timestamp it was first seen at; its retention is
 * the horizon. A duplicate arriving after the horizon counts again: a longer horizon catches later
 * duplicates at the cost of a larger store (about 60 bytes per transaction). Duplicates must reach
 * the same input partition, which holds when producers key records by a value that is stable for a
 * transaction (loadgen keys by customer id). Under exactly-once the store and the outputs commit
 * together, so a crash between them cannot let a duplicate through.
 */
final class DedupeProcessor implements Processor<byte[], TransactionEvent, byte[], TransactionEvent> {
    private final String storeName;
    private final long horizonMs;
    private ProcessorContext<byte[], TransactionEvent> context;
    private WindowStore<String, Long> seen;

    DedupeProcessor(String storeName, Duration horizon) {
        this.storeName = storeName;
        this.horizonMs = horizon.toMillis();
    }

    @Override
    public void init(ProcessorContext<byte[], TransactionEvent> context) {
        this.context = context;
        this.seen = context.getStateStore(storeName);
    }

    @Override
    public void process(Record<byte[], TransactionEvent> record) {
        String id = record.value().getTransactionId();
        long ts = record.timestamp();
        try (WindowStoreIterator<Long> earlier = seen.backwardFetch(id, Instant.ofEpochMilli(ts - horizonMs),
                Instant.ofEpochMilli(ts + horizonMs))) {
            if (earlier.hasNext()) return; // counted already
        }
        seen.put(id, ts, ts);
        context.forward(record);
    }
}
