package io.tally.ingest.replay;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.ingest.sink.BucketWrite;
import io.tally.ingest.sink.BulkExecutor;
import io.tally.ingest.sink.BulkWriter;
import io.tally.ingest.sink.DeadLetter;
import io.tally.ingest.sink.DeadLetterPublisher;
import io.tally.ingest.sink.SinkMetrics;
import io.tally.ingest.sink.SinkSettings;
import io.tally.model.EntityBucket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import reactor.core.publisher.Mono;

/**
 * Writes the recomputed buckets through the sink's {@link BulkWriter}: the same conditional-patch-or-create
 * protocol on {@code ver}, congestion-aware retries, AIMD concurrency and RU budget ({@code sink.*}
 * settings). A bucket whose stored {@code ver} is already as high is left alone (412, counted as
 * unchanged), so running a replay twice, or over a correct live container, writes nothing.
 *
 * <p>Documents go out in slices of {@code sink.window.max-documents}, each handed over only while the
 * writer's in-flight documents stay under {@code sink.max-in-flight-documents}, as the sink does. A
 * document Cosmos refuses for good (400/413/422) is not dead-lettered (there is no Kafka record behind
 * it): it is counted as refused and makes the job fail.
 */
final class ReplayWriter {
    /** Names the origin of the writes in the sink's logs. */
    private static final TopicPartition ORIGIN = new TopicPartition("replay", 0);
    private static final int REFUSALS_KEPT = 5;

    private final SinkSettings settings;
    private final BulkExecutor executor;
    private final Duration timeout;

    ReplayWriter(SinkSettings settings, BulkExecutor executor, Duration timeout) {
        this.settings = settings;
        this.executor = executor;
        this.timeout = timeout;
    }

    WriteTotals write(Collection<EntityBucket> documents, ReplayProgress progress) throws InterruptedException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Refusals refusals = new Refusals();
        long deadline = System.nanoTime() + timeout.toNanos();
        int slice = Math.min(settings.windowMaxDocuments(), settings.maxInFlightDocuments());
        String updatedAt = Instant.now().toString();
        progress.start("writing", documents.size());
        try (BulkWriter writer = new BulkWriter(settings, executor, refusals, new SinkMetrics(registry))) {
            List<BucketWrite> batch = new ArrayList<>(slice);
            for (EntityBucket d : documents) {
                d.stamp(updatedAt);
                batch.add(BucketWrite.of(ORIGIN, d));
                if (batch.size() == slice) {
                    if (!awaitInFlight(writer, settings.maxInFlightDocuments() - slice, deadline, registry, progress)) break;
                    writer.submit(batch);
                    batch = new ArrayList<>(slice);
                }
            }
            if (!batch.isEmpty() && awaitInFlight(writer, settings.maxInFlightDocuments() - batch.size(), deadline, registry, progress)) {
                writer.submit(batch);
            }
            awaitInFlight(writer, 0, deadline, registry, progress);
            long written = count(registry, "written"), unchanged = count(registry, "stale");
            progress.finish(written + unchanged + refusals.count.get());
            double ru = registry.get("tally.sink.request.units").counter().count();
            long incomplete = documents.size() - written - unchanged - refusals.count.get();
            return new WriteTotals(written, unchanged, refusals.count.get(), incomplete, ru, List.copyOf(refusals.first));
        }
    }

    /** Waits until at most {@code limit} documents are in flight; false when the deadline passed first. */
    private static boolean awaitInFlight(BulkWriter writer, int limit, long deadline, SimpleMeterRegistry registry,
                                         ReplayProgress progress) throws InterruptedException {
        while (writer.inFlightDocuments() > Math.max(0, limit)) {
            Throwable failure = writer.failure();
            if (failure != null) throw new IllegalStateException("the bulk writer failed", failure);
            if (System.nanoTime() > deadline) return false;
            progress.update(count(registry, "written") + count(registry, "stale") + count(registry, "dead_lettered"));
            Thread.sleep(20); // the job's own thread; Reactor threads do the writing
        }
        return true;
    }

    private static long count(SimpleMeterRegistry registry, String outcome) {
        return (long) registry.get("tally.sink.documents.written").tag("outcome", outcome).counter().count();
    }

    /** Counts what Cosmos refused for good and keeps the first few reasons for the report. */
    private static final class Refusals implements DeadLetterPublisher {
        final AtomicLong count = new AtomicLong();
        final ConcurrentLinkedQueue<String> first = new ConcurrentLinkedQueue<>();

        @Override
        public Mono<Void> publish(BucketWrite write, DeadLetter letter) {
            return Mono.fromRunnable(() -> {
                if (count.incrementAndGet() <= REFUSALS_KEPT) first.add(write.bucketId() + ": " + letter);
            });
        }
    }
}
