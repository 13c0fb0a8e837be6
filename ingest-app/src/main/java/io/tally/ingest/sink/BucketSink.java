package io.tally.ingest.sink;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.models.CosmosBulkOperationResponse;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.PartitionKey;
import io.tally.model.BucketDocument;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;

/**
 * Stages 7-10 in their simplest correct form: poll bucket updates, keep the newest value of each
 * bucket in the batch, upsert them with one bulk call, and commit the offsets only after every
 * write succeeded. A failed write stops the loop without committing, so the updates are read again
 * by whoever owns the partition next.
 *
 * <p>Thread contract: {@link #run()} owns the consumer on the calling thread; {@link #stop()} may be
 * called from any thread.
 */
public final class BucketSink implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(BucketSink.class);

    private final Consumer<String, BucketDocument> consumer;
    private final CosmosAsyncContainer container;
    private final Duration pollTimeout;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong documentsWritten = new AtomicLong();

    public BucketSink(Consumer<String, BucketDocument> consumer, CosmosAsyncContainer container, Duration pollTimeout) {
        this.consumer = consumer;
        this.container = container;
        this.pollTimeout = pollTimeout;
    }

    @Override
    public void run() {
        try {
            while (running.get()) {
                ConsumerRecords<String, BucketDocument> records = consumer.poll(pollTimeout);
                if (records.isEmpty()) continue;
                write(coalesce(records));
                consumer.commitSync();
            }
        } catch (WakeupException e) {
            if (running.get()) throw e;
        } finally {
            consumer.close();
        }
    }

    public void stop() {
        running.set(false);
        consumer.wakeup();
    }

    public long documentsWritten() {
        return documentsWritten.get();
    }

    /** Only the newest value of each bucket matters: values are absolute. */
    static List<BucketDocument> coalesce(Iterable<ConsumerRecord<String, BucketDocument>> records) {
        Map<String, BucketDocument> newest = new LinkedHashMap<>();
        for (ConsumerRecord<String, BucketDocument> r : records) {
            if (r.value() == null) continue;
            newest.merge(r.key(), r.value(), (a, b) -> b.ver() >= a.ver() ? b : a);
        }
        return new ArrayList<>(newest.values());
    }

    private void write(List<BucketDocument> docs) {
        Flux<CosmosItemOperation> ops = Flux.fromIterable(docs)
                .map(d -> CosmosBulkOperations.getUpsertItemOperation(d, new PartitionKey(d.pk()), d.pk() + "|" + d.id()));
        List<CosmosBulkOperationResponse<Object>> responses = container.executeBulkOperations(ops).collectList().block();
        for (CosmosBulkOperationResponse<Object> r : responses) {
            int status = r.getResponse() != null ? r.getResponse().getStatusCode() : -1;
            if (r.getException() != null || status / 100 != 2) {
                throw new IllegalStateException("Cosmos bulk upsert of " + r.getOperation().getContext()
                        + " failed with status " + status, r.getException());
            }
        }
        documentsWritten.addAndGet(responses.size());
        log.debug("wrote {} bucket documents", responses.size());
    }
}
