package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;

/**
 * Stages 5 and 6: applies each delta of an entity's bundle to its bucket's absolute value
 * ({@link BucketMath}), keeps the buckets changed since the last commit as objects, and at the start of
 * every commit ({@link CommitHook}) writes each of them once to the bucket store (and so its changelog)
 * and emits it keyed {@code pk|id}: at most once per bucket per commit interval, with its newest value,
 * inside the transaction that commits the input. {@code updatedAt} is stamped once per emission, and a
 * bucket's first emission carries {@link BucketDocumentSerde#CREATED_HEADER}.
 *
 * <p>This does for stage 5 what Kafka Streams' record cache does for the DSL's aggregations, without
 * encoding and decoding the bucket on every delta: the record cache holds bytes, and with six deltas an
 * event that was the largest cost of the stream thread. A crash loses the changed buckets together with
 * the uncommitted transaction; the store and its changelog hold what was committed.
 */
final class BucketAggregator implements Processor<String, EntityDeltas, String, BucketDocument> {
    /**
     * Changed buckets held per task before they are written and emitted without waiting for the commit:
     * about 400 bytes each as objects, so ~20 MB per task at most. One commit interval (1 s) at 20,000
     * events/s touches at most 120,000 buckets over 6 tasks (6 deltas an event), far fewer with Zipf keys.
     */
    static final int MAX_CHANGED = 50_000;
    private static final byte[] CREATED = {1};

    private final String storeName;
    private final String commitHookStore;
    private final BucketStarts starts = new BucketStarts();
    /** Buckets changed since the last write, in the order first changed; one lookup per delta, updated in place. */
    private final Map<String, Changed> changed = new LinkedHashMap<>();
    private ProcessorContext<String, BucketDocument> context;
    private TimestampedKeyValueStore<String, BucketDocument> buckets;
    private boolean holdUntilCommit;

    /** A changed bucket: its newest value, the newest record timestamp that changed it, and whether the store lacked it. */
    private static final class Changed {
        BucketDocument value;
        long timestamp;
        final boolean created;

        Changed(BucketDocument value, long timestamp, boolean created) {
            this.value = value;
            this.timestamp = timestamp;
            this.created = created;
        }
    }

    BucketAggregator(String storeName, String commitHookStore) {
        this.storeName = storeName;
        this.commitHookStore = commitHookStore;
    }

    @Override
    public void init(ProcessorContext<String, BucketDocument> context) {
        this.context = context;
        // Changes not yet written belong to an aborted transaction when Kafka Streams initialises the processor again
        // (a corrupted task is closed dirty and revived; its input is read again from the last commit). The store
        // holds what was committed, so they go.
        changed.clear();
        this.buckets = context.getStateStore(storeName);
        CommitHook hook = context.getStateStore(commitHookStore);
        // Outside Kafka Streams' own runtime there is no commit to hang on: write and emit every change at once.
        this.holdUntilCommit = hook.install(context, this::writeChanged);
    }

    @Override
    public void process(Record<String, EntityDeltas> record) {
        EntityDeltas bundle = record.value();
        long ts = record.timestamp();
        for (EntityDeltas.Delta d : bundle.deltas()) {
            String key = bundle.bucketKey(d);
            Changed bucket = changed.get(key);
            if (bucket == null) {
                ValueAndTimestamp<BucketDocument> stored = buckets.get(key);
                bucket = stored == null ? new Changed(null, ts, true) : new Changed(stored.value(), Math.max(ts, stored.timestamp()), false);
                changed.put(key, bucket);
            } else {
                bucket.timestamp = Math.max(ts, bucket.timestamp);
            }
            bucket.value = BucketMath.apply(bucket.value, bundle.pk(), d, starts);
        }
        if (!holdUntilCommit || changed.size() >= MAX_CHANGED) writeChanged();
    }

    private void writeChanged() {
        if (changed.isEmpty()) return;
        String now = Instant.now().toString();
        for (Map.Entry<String, Changed> e : changed.entrySet()) {
            Changed bucket = e.getValue();
            buckets.put(e.getKey(), ValueAndTimestamp.make(bucket.value, bucket.timestamp));
            RecordHeaders headers = new RecordHeaders();
            if (bucket.created) headers.add(BucketDocumentSerde.CREATED_HEADER, CREATED);
            context.forward(new Record<>(e.getKey(), bucket.value.withUpdatedAt(now), bucket.timestamp, headers));
        }
        changed.clear();
    }
}
