package io.tally.ingest.topology;

import io.tally.rules.source.SourceEvent;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Stage 2: forwards the first record of each transaction id (within its source: {@link SourceEvent#dedupeKey()}) and
 * drops later ones seen within the horizon ({@link DedupeRule}), so producer retries and replays of overlapping history count once.
 *
 * <p>The store maps transaction id to the record timestamp it was first seen at, filed under the
 * sighting's cell; a lookup is one point read per cell that can hold a sighting within the horizon.
 * A duplicate arriving after the horizon counts again: a longer horizon catches later duplicates at
 * the cost of a larger store (about 60 bytes per transaction, kept for two horizons). Duplicates must
 * reach the same input partition, which holds when producers key records by a value that is stable
 * for a transaction (loadgen keys by customer id). Under exactly-once the store and the outputs commit
 * together, so a crash between them cannot let a duplicate through.
 */
final class DedupeProcessor implements Processor<byte[], SourceEvent, byte[], SourceEvent> {
    private final String storeName;
    private final DedupeRule rule;
    private ProcessorContext<byte[], SourceEvent> context;
    private WindowStore<String, Long> seen;

    DedupeProcessor(String storeName, DedupeRule rule) {
        this.storeName = storeName;
        this.rule = rule;
    }

    @Override
    public void init(ProcessorContext<byte[], SourceEvent> context) {
        this.context = context;
        this.seen = context.getStateStore(storeName);
    }

    @Override
    public void process(Record<byte[], SourceEvent> record) {
        String id = record.value().dedupeKey();
        long ts = record.timestamp();
        for (long cell = rule.firstCell(ts), last = rule.lastCell(ts); cell <= last; cell += rule.cellWidthMs()) {
            Long first = seen.fetch(id, cell);
            if (first != null && rule.isDuplicate(first, ts)) return; // counted already
        }
        seen.put(id, ts, rule.cellStart(ts));
        context.forward(record);
    }
}
