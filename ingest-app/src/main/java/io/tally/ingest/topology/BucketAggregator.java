package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import java.time.Instant;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;

/**
 * Stages 5 and 6: applies each delta of an entity's bundle to its bucket's absolute value in the bucket
 * store ({@link BucketMath}), and emits changed buckets keyed {@code pk|id} when the record cache flushes
 * ({@link CacheFlushEmitter}): at most once per bucket per commit interval, with its newest value.
 * {@code updatedAt} is stamped once per emitted value, not per delta.
 */
final class BucketAggregator implements Processor<String, EntityDeltas, String, BucketDocument> {
    private final String storeName;
    private final BucketStarts starts = new BucketStarts();
    private ProcessorContext<String, BucketDocument> context;
    private TimestampedKeyValueStore<String, BucketDocument> buckets;
    private boolean emitOnFlush;

    BucketAggregator(String storeName) {
        this.storeName = storeName;
    }

    @Override
    public void init(ProcessorContext<String, BucketDocument> context) {
        this.context = context;
        this.buckets = context.getStateStore(storeName);
        this.emitOnFlush = CacheFlushEmitter.install(buckets, context, (key, flushed) -> emit(flushed));
    }

    @Override
    public void process(Record<String, EntityDeltas> record) {
        EntityDeltas bundle = record.value();
        long ts = record.timestamp();
        for (EntityDeltas.Delta d : bundle.deltas()) {
            String key = bundle.bucketKey(d);
            ValueAndTimestamp<BucketDocument> current = buckets.get(key);
            BucketDocument next = BucketMath.apply(current == null ? null : current.value(), bundle, d, starts);
            ValueAndTimestamp<BucketDocument> stored = ValueAndTimestamp.make(next, current == null ? ts : Math.max(ts, current.timestamp()));
            buckets.put(key, stored);
            if (!emitOnFlush) emit(record.withKey(key).withValue(next).withTimestamp(stored.timestamp()));
        }
    }

    private void emit(Record<String, BucketDocument> bucket) {
        context.forward(bucket.withValue(bucket.value().withUpdatedAt(Instant.now().toString())));
    }
}
