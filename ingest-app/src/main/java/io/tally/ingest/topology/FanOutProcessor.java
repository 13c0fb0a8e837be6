package io.tally.ingest.topology;

import io.tally.rules.source.SourceEvent;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Stage 3 as a processor: fans each event out ({@link FanOut}) and combines the deltas per bucket until
 * the next commit ({@link PendingDeltas}), then forwards one record per pk, keyed by pk for the repartition.
 *
 * <p>Why this stays exactly-once: the pending deltas must reach the repartition topic inside the transaction
 * that commits the input offsets they came from. They are forwarded from the {@link CommitHook}, which Kafka
 * Streams calls at the start of every commit (and before a clean close), before the transaction commits. A
 * crash loses them together with the uncommitted transaction, and the input is read again from the last
 * commit. Past {@link #MAX_PENDING} buckets they are forwarded at once, which is always safe.
 */
final class FanOutProcessor implements Processor<byte[], SourceEvent, String, EntityDeltas> {
    /**
     * Buckets held per task before forwarding without waiting for the commit: about 250 bytes each, so
     * ~5 MB per task. At the backlog pace (CommitPace: a commit every 3 s) it fills at about 1,100 events/s per task
     * at the default rules (6 deltas an event), about 90 at 51 rules (77), before Zipf keys combine them; above that
     * the pending deltas go sooner, which is always safe (stage 5 still combines them until its own commit).
     */
    static final int MAX_PENDING = 20_000;

    private final FanOut fanOut;
    private final String commitHookStore;
    private final PendingDeltas pending = new PendingDeltas();
    private final CommitPace.Task pace;
    private ProcessorContext<String, EntityDeltas> context;
    private boolean combine;

    FanOutProcessor(FanOut fanOut, String commitHookStore, CommitPace pace) {
        this.fanOut = fanOut;
        this.pace = new CommitPace.Task(pace);
        this.commitHookStore = commitHookStore;
    }

    @Override
    public void init(ProcessorContext<String, EntityDeltas> context) {
        this.context = context;
        // After a clean commit nothing is pending. Anything still here belongs to a transaction that was aborted:
        // Kafka Streams closes a corrupted task dirty and initialises the same processor again, and its input is
        // read again from the last commit, so keeping these deltas would count their events twice.
        pending.discard();
        CommitHook hook = context.getStateStore(commitHookStore);
        // Outside Kafka Streams' own runtime there is no commit to hang on: forward each event's deltas at once.
        this.combine = hook.install(context, () -> {
            pace.committed(System.currentTimeMillis());
            forwardPending();
        });
        if (combine) pace.install(context);
    }

    @Override
    public void process(Record<byte[], SourceEvent> record) {
        pace.processed(record.timestamp(), System.currentTimeMillis());
        for (EntityDeltas d : fanOut.deltas(record.value(), record.timestamp())) {
            if (combine) pending.add(d, record.timestamp());
            else context.forward(new Record<>(d.pk(), d, record.timestamp()));
        }
        if (pending.size() >= MAX_PENDING) forwardPending();
    }

    private void forwardPending() {
        if (pending.isEmpty()) return;
        long ts = pending.timestamp();
        for (EntityDeltas d : pending.drain()) context.forward(new Record<>(d.pk(), d, ts));
    }
}
