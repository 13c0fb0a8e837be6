package io.tally.ingest.topology;

import io.tally.model.EntityBucket;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;

/**
 * Stages 5 and 6: applies each delta of an entity's bundle to the entity's bucket documents
 * ({@link EntityBucketMath}), keeps the documents changed since the last commit as objects, and at the start of
 * every commit ({@link CommitHook}) writes each of them once to the bucket store (and so its changelog)
 * and emits it keyed {@code pk|id}: at most once per document per commit interval, with its newest value,
 * inside the transaction that commits the input. One record per changed entity bucket, however many of its
 * grades changed. {@code updatedAt} is stamped once per emission, and a document's first emission carries
 * {@link EntityBucketSerde#CREATED_HEADER}.
 *
 * <p>This does for stage 5 what Kafka Streams' record cache does for the DSL's aggregations, without
 * encoding and decoding the document on every delta: the record cache holds bytes, and with six deltas an
 * event that was the largest cost of the stream thread. A crash loses the changed buckets together with
 * the uncommitted transaction; the store and its changelog hold what was committed.
 */
final class BucketAggregator implements Processor<String, EntityDeltas, String, EntityBucket>, EntityBucketMath.Documents {
    /**
     * Changed documents held per task before they are written and emitted without waiting for the commit. An
     * entity bucket of the default rules is ~0.5-1 KB as objects, of the many-rules files ~5 KB and more (an hour
     * holding its minutes), so 5,000 is up to ~25 MB per task at many rules. At the backlog pace (CommitPace: a commit
     * every 3 s) the tasks reach it at about 2,000 events/s over six of them at 51 rules (4-5 changed documents an
     * event), about 9,000 at the default rules (1.1); above that they emit sooner than the commit, always safe. The
     * bound also caps the work of one commit.
     */
    static final int MAX_CHANGED = 5_000;
    private static final byte[] CREATED = {1};

    private final String storeName;
    private final String commitHookStore;
    private final BucketStarts starts = new BucketStarts();
    private final EntityBucketMath.RuleTtls ttls;
    private final CountedGrades counted;
    private final CommitPace.Task pace;
    /** Documents changed since the last write, in the order first changed; one lookup per delta, updated in place. */
    private final Map<String, Changed> changed = new LinkedHashMap<>();
    private ProcessorContext<String, EntityBucket> context;
    private TimestampedKeyValueStore<String, EntityBucket> buckets;
    private boolean holdUntilCommit;
    private long recordTimestamp;

    /**
     * A changed document: its newest value, the newest record timestamp among the records that changed it since the
     * last write, the newest the store had before, and whether the store lacked it. The emitted update carries only the
     * first: the sink reads it as how far behind the news in this update is, so an update of history (a backfill, a
     * replayed backlog) is not taken for live news because live changed the same document earlier.
     */
    private static final class Changed {
        final EntityBucket value;
        long timestamp;
        final long storedTimestamp;
        final boolean created;

        Changed(EntityBucket value, long timestamp, long storedTimestamp, boolean created) {
            this.value = value;
            this.timestamp = timestamp;
            this.storedTimestamp = storedTimestamp;
            this.created = created;
        }
    }

    BucketAggregator(String storeName, String commitHookStore, EntityBucketMath.RuleTtls ttls, CountedGrades counted, CommitPace pace) {
        this.ttls = ttls;
        this.pace = new CommitPace.Task(pace);
        this.counted = counted;
        this.storeName = storeName;
        this.commitHookStore = commitHookStore;
    }

    @Override
    public void init(ProcessorContext<String, EntityBucket> context) {
        this.context = context;
        // Changes not yet written belong to an aborted transaction when Kafka Streams initialises the processor again
        // (a corrupted task is closed dirty and revived; its input is read again from the last commit). The store
        // holds what was committed, so they go.
        changed.clear();
        this.buckets = context.getStateStore(storeName);
        CommitHook hook = context.getStateStore(commitHookStore);
        // Outside Kafka Streams' own runtime there is no commit to hang on: write and emit every change at once.
        this.holdUntilCommit = hook.install(context, () -> {
            pace.committed(System.currentTimeMillis());
            writeChanged();
        });
        if (holdUntilCommit) pace.install(context);
    }

    @Override
    public void process(Record<String, EntityDeltas> record) {
        EntityDeltas bundle = record.value();
        recordTimestamp = record.timestamp();
        pace.processed(recordTimestamp, System.currentTimeMillis());
        if (bundle.generation() > counted.generation()) {
            throw new RulesGenerationException("deltas of " + bundle.pk(), bundle.generation(), counted.generation());
        }
        for (EntityDeltas.Delta d : bundle.deltas()) {
            // counted under older rules and still on the topic at the change: a grade since changed or removed is not
            // applied (its event is on the history side of the seam, which the backfill counts)
            if (bundle.generation() < counted.generation() && !counted.keeps(d.rule(), d.unit(), bundle.generation())) continue;
            EntityBucketMath.apply(this, bundle.pk(), d, starts, ttls);
        }
        if (!holdUntilCommit || changed.size() >= MAX_CHANGED) writeChanged();
    }

    @Override
    public EntityBucket changing(String key, Supplier<EntityBucket> create) {
        Changed doc = changed.get(key);
        if (doc == null) {
            ValueAndTimestamp<EntityBucket> stored = buckets.get(key);
            if (stored == null) {
                doc = new Changed(create.get(), recordTimestamp, Long.MIN_VALUE, true);
                if (counted.generation() > 0) doc.value.restart(counted.verFloor(), null);
                changed.put(key, doc);
            } else {
                doc = new Changed(stored.value(), recordTimestamp, stored.timestamp(), false);
                changed.put(key, doc); // first: moving a main document to a new generation changes its pages through here
                EntityBucketMath.loaded(this, key, doc.value, counted, ttls);
            }
        } else {
            doc.timestamp = Math.max(recordTimestamp, doc.timestamp);
        }
        return doc.value;
    }

    @Override
    public EntityBucket peek(String key) {
        Changed doc = changed.get(key);
        if (doc != null) return doc.value;
        ValueAndTimestamp<EntityBucket> stored = buckets.get(key);
        return stored == null ? null : stored.value();
    }

    private void writeChanged() {
        if (changed.isEmpty()) return;
        String now = Instant.now().toString();
        for (Map.Entry<String, Changed> e : changed.entrySet()) {
            Changed doc = e.getValue();
            doc.value.stamp(now);
            buckets.put(e.getKey(), ValueAndTimestamp.make(doc.value, Math.max(doc.timestamp, doc.storedTimestamp)));
            RecordHeaders headers = new RecordHeaders();
            if (doc.created) headers.add(EntityBucketSerde.CREATED_HEADER, CREATED);
            // Encoded by the sink node before forward returns, so the later changes to the object do not reach it.
            context.forward(new Record<>(e.getKey(), doc.value, doc.timestamp, headers));
        }
        changed.clear();
    }
}
