package io.tally.ingest.sink;

import com.azure.cosmos.CosmosAsyncContainer;
import io.tally.model.EntityBucketJson;
import io.tally.schemas.Topics;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stages 7-10, wired: the poll loop reads bucket updates into the {@link Coalescer}, hands each closed
 * window to the {@link BulkWriter}, and commits what the {@link OffsetTracker} says is durable. It only
 * wires and paces; every decision lives in those classes.
 *
 * <p>Backpressure: a closed window's writes wait as bytes and are decoded and handed to the writer in parts while
 * its in-flight documents stay under {@code sink.max-in-flight-documents}; the next window stays open (and keeps
 * coalescing) until the last one is all handed over. When that window is full too, or a write is stalled past its
 * retry bound, every partition is paused (the consumer keeps its group membership by polling) until the writer
 * catches up. Memory is bounded by the in-flight cap plus, as bytes, what waits in the coalescer (at most
 * {@code sink.window.max-documents} and {@code sink.window.max-bytes}) and one closed window, whatever the backlog.
 *
 * <p>Rebalance: on revocation the partitions' unsent updates are dropped (they are not committed, the
 * new owner reads them again), their in-flight writes get {@code sink.revoke-drain-timeout.ms} to finish,
 * the durable prefix is committed, and what is left is abandoned before the callback returns, i.e. before
 * the new owner can start. A lost partition is abandoned at once.
 *
 * <p>Thread contract: {@link #run()} owns the consumer on the calling thread; {@link #stop()} may be
 * called from any thread.
 */
public final class BucketSink implements Runnable, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BucketSink.class);

    private final SinkSettings settings;
    private final String topic;
    private final UpdateSource source;
    private final BulkWriter writer;
    private final DeadLetterPublisher deadLetters;
    private final SinkMetrics metrics;
    private final Coalescer coalescer;
    /** A closed window's writes not yet handed to the writer, as bytes (poll thread only). */
    private final ArrayDeque<BucketWrite> ready = new ArrayDeque<>();
    private final OffsetTracker tracker = new OffsetTracker();
    private final AtomicBoolean running = new AtomicBoolean(true);
    /** The coalescer's documents, for the metrics thread. */
    private final java.util.concurrent.atomic.AtomicInteger waiting = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong waitingBytes = new java.util.concurrent.atomic.AtomicLong();
    private long lastCommitNanos = System.nanoTime();
    private boolean paused;

    public BucketSink(SinkSettings settings, String topic, UpdateSource source, BulkExecutor executor,
                      DeadLetterPublisher deadLetters, SinkMetrics metrics) {
        this.settings = settings;
        this.topic = topic;
        this.source = source;
        this.deadLetters = deadLetters;
        this.metrics = metrics;
        this.writer = new BulkWriter(settings, executor, deadLetters, metrics);
        this.coalescer = new Coalescer(EntityBucketJson::parts, holds(settings));
        metrics.gauge("tally.sink.waiting.documents", "bucket documents read and not yet handed to Cosmos (an update behind "
                + "waits up to sink.backlog.max-window.ms)", waiting::get);
        metrics.gauge("tally.sink.waiting.bytes", "heap the waiting bucket documents hold, estimated (bounded by "
                + "sink.window.max-bytes)", waitingBytes::get);
    }

    /**
     * The production wiring: a KafkaConsumer on the bucket-updates topic, Cosmos bulk, a Kafka producer
     * to the bucket-updates DLQ (updates Cosmos refuses for good, or that cannot be decoded, with the
     * original key and value and the headers of {@link io.tally.schemas.DeadLetters}). The two configs hold
     * bootstrap servers and the pass-through settings of each client ({@code kafka.} and {@code kafka.consumer.},
     * {@code kafka.} and {@code kafka.producer.}).
     */
    public static BucketSink create(SinkSettings settings, Topics.Names topics, Map<String, Object> consumerConfig,
                                    Map<String, Object> producerConfig, CosmosAsyncContainer container, SinkMetrics metrics) {
        Map<String, Object> c = new HashMap<>(consumerConfig);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, settings.groupId());
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // only buckets of committed Streams transactions
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);         // offsets move only after Cosmos has the data
        c.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
        return new BucketSink(settings, topics.bucketUpdates(), new KafkaUpdateSource(consumer),
                new CosmosBulkExecutor(container, settings), DeadLetterPublisher.kafka(producerConfig, topics.bucketUpdatesDlq()), metrics);
    }

    @Override
    public void run() {
        source.subscribe(topic, new UpdateSource.RebalanceListener() {
            @Override
            public void revoked(Collection<TopicPartition> partitions) { onRevoked(partitions); }

            @Override
            public void lost(Collection<TopicPartition> partitions) { onLost(partitions); }

            @Override
            public void owning(int owned, int total) { onOwning(owned, total); }
        });
        try {
            while (running.get()) {
                rethrowWriterFailure();
                handOver();
                boolean pause = writer.stalled() || (full() && !ready.isEmpty());
                if (pause != paused) {
                    source.pauseAll(pause);
                    paused = pause;
                    log.debug("sink {} (in flight {}, stalled {})", pause ? "paused" : "resumed", writer.inFlightDocuments(), writer.stalled());
                }
                ConsumerRecords<String, byte[]> records = source.poll(pollTimeout());
                for (ConsumerRecord<String, byte[]> r : records) coalescer.add(r);
                metrics.consumed.increment(records.count());
                handOver();
                waiting.set(coalescer.documents());
                waitingBytes.set(coalescer.bytes());
                maybeCommit(false);
            }
        } catch (WakeupException e) {
            if (running.get()) throw e;
        } finally {
            shutdown();
        }
    }

    private Duration pollTimeout() {
        if (paused || !ready.isEmpty()) return Duration.ofMillis(Math.min(50, settings.pollTimeout().toMillis()));
        long due = coalescer.dueAtNanos();
        if (due == Long.MAX_VALUE) return settings.pollTimeout();
        long left = Duration.ofNanos(due - System.nanoTime()).toMillis();
        return Duration.ofMillis(Math.max(0, Math.min(left, settings.pollTimeout().toMillis())));
    }

    /**
     * How long an update waits, from how far behind it is ({@link Coalescer.Holds}): the flush window while it is
     * within twice the freshness target the flush window comes from (five flush windows, 2 s at the default target);
     * further behind, as long as it is behind beyond that, up to {@code sink.backlog.max-window.ms}; while the whole
     * stream is behind, {@code sink.backlog.catch-up-window.ms}. Draining a backlog nobody waits on each second, and the
     * longer a bucket waits, the fewer times a busy document is written again; an update that keeps up, or is only a
     * little late, waits no longer than before.
     */
    static Coalescer.Holds holds(SinkSettings settings) {
        Duration keepingUp = settings.flushWindow().multipliedBy(5);
        return new Coalescer.Holds(settings.flushWindow(), keepingUp, settings.backlogMaxWindow(), settings.catchUpWindow(),
                keepingUp.plus(settings.upstreamPause()));
    }

    /**
     * Closes a window when one is due, or the coalescer is full (then the least recently updated buckets go too, until
     * half the cap waits), and the last one is all handed over; feeds the writer.
     */
    private void handOver() {
        if (writer.stalled()) return;
        if (ready.isEmpty() && !coalescer.isEmpty()) {
            long now = System.nanoTime();
            int behindRoom = behindRoom(now);
            if (full()) closeWindow(coalescer.drain(now, settings.windowMaxDocuments() / 2, settings.windowMaxBytes() / 2, behindRoom));
            else if (now >= coalescer.dueAtNanos()) closeWindow(coalescer.drain(now, Integer.MAX_VALUE, Long.MAX_VALUE, behindRoom));
        }
        feed();
    }

    /**
     * How many writes behind live ones may go now: while updates that keep up are read, what
     * {@code sink.backlog.max-in-flight-documents} leaves beside those in flight. A backfill's history released after its
     * hold is thousands of documents at once; handed over whole, every live write behind it waited for all of them (at
     * the service, in the RU pacer's queue).
     */
    private int behindRoom(long now) {
        if (settings.backlogInFlight() == 0 || !coalescer.keepingUp(now)) return Integer.MAX_VALUE;
        return Math.max(0, settings.backlogInFlight() - writer.behindInFlightDocuments());
    }

    /** The coalescer holds as many documents, or as much heap, as it may. */
    private boolean full() {
        return coalescer.documents() >= settings.windowMaxDocuments() || coalescer.bytes() >= settings.windowMaxBytes();
    }

    private void closeWindow(Coalescer.Window w) {
        tracker.register(w.segments());
        if (!w.writes().isEmpty()) metrics.coalescing.record((double) w.records() / w.writes().size());
        ready.addAll(w.writes());
    }

    /**
     * Decodes and hands over the waiting writes while in-flight room lasts, in parts of at least one bulk chunk (or
     * what is left), so a window larger than the in-flight cap is written as room frees up.
     */
    private void feed() {
        int room = settings.maxInFlightDocuments() - writer.inFlightDocuments();
        if (ready.isEmpty() || room < Math.min(ready.size(), settings.chunkSize())) return;
        List<BucketWrite> part = new ArrayList<>(Math.min(room, ready.size()));
        while (!ready.isEmpty() && part.size() < room) part.add(coalescer.decode(ready.poll()));
        writer.submit(part);
    }

    private void maybeCommit(boolean now) {
        if (!now && System.nanoTime() - lastCommitNanos < settings.commitInterval().toNanos()) return;
        lastCommitNanos = System.nanoTime();
        metrics.lag.set(source.lag());
        Map<TopicPartition, OffsetAndMetadata> offsets = tracker.committable();
        if (offsets.isEmpty()) return;
        try {
            source.commit(offsets);
            log.debug("committed {}", offsets);
        } catch (WakeupException e) {
            tracker.commitFailed(offsets);
            throw e;
        } catch (KafkaException e) { // a rebalance in progress, a coordinator move: the next commit retries
            tracker.commitFailed(offsets);
            log.warn("commit of {} failed, retried at the next interval: {}", offsets, e.toString());
        }
    }

    private void onRevoked(Collection<TopicPartition> partitions) {
        coalescer.drop(partitions);
        ready.removeIf(w -> partitions.contains(w.partition)); // never handed over: the new owner reads them again
        boolean drained;
        try {
            drained = writer.awaitPartitions(partitions, settings.revokeDrainTimeout());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            drained = false;
        }
        try {
            maybeCommit(true);
        } catch (KafkaException e) {
            log.warn("commit on revocation of {} failed; the new owner replays from the previous commit: {}", partitions, e.toString());
        }
        writer.abandon(partitions);
        tracker.forget(partitions);
        log.info("partitions {} revoked ({})", partitions, drained ? "in-flight writes finished"
                : "in-flight writes abandoned after " + settings.revokeDrainTimeout().toMillis() + " ms");
    }

    /**
     * A fleet's budget ({@code sink.ru-budget.fleet-control-container}) is split by the partitions each sink owns: its
     * pacer never admits more than the budget's share of its partitions. The SDK's global throughput control divides
     * the budget by the sinks' recent use, but it admits every request while the current second's allocation is not
     * yet spent, and charges are booked only as answers arrive: updates that come in bursts (a slow aggregation
     * commit, a catch-up) went out whole, and three sinks spent 1.5-3.5x a 600 RU/s budget over 20 s windows
     * (SinkFleetBudgetIT). Partitions share load evenly (updates are keyed by entity), and a rebalance moves a dead
     * sink's share to the survivors as soon as its partitions move.
     */
    private void onOwning(int owned, int total) {
        if (settings.ruBudget() == 0 || settings.fleetBudgetControlContainer().isEmpty() || owned == 0 || total == 0) return;
        double share = (double) settings.ruBudget() * owned / total;
        writer.limitBudget(share);
        log.info("sink owns {} of {} partitions: {} RU/s of the fleet's budget of {} RU/s", owned, total, Math.round(share), settings.ruBudget());
    }

    private void onLost(Collection<TopicPartition> partitions) {
        coalescer.drop(partitions);
        ready.removeIf(w -> partitions.contains(w.partition));
        writer.abandon(partitions);
        tracker.forget(partitions);
        log.warn("partitions {} lost; their in-flight writes are abandoned", partitions);
    }

    private void rethrowWriterFailure() {
        Throwable f = writer.failure();
        if (f != null) throw new IllegalStateException("sink writer failed", f);
    }

    /** Orderly stop: write what was read, wait for it (bounded), commit, close. */
    private void shutdown() {
        try {
            if (writer.failure() == null) {
                if (!coalescer.isEmpty()) closeWindow(coalescer.drain());
                long deadline = System.nanoTime() + settings.revokeDrainTimeout().toNanos();
                while ((writer.inFlightDocuments() > 0 || !ready.isEmpty()) && System.nanoTime() < deadline) {
                    if (!writer.stalled()) feed();
                    Thread.sleep(10);
                }
                maybeCommit(true);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.warn("final commit failed; the next owner replays from the previous commit: {}", e.toString());
        } finally {
            writer.close();
            source.close();
            deadLetters.close();
        }
    }

    public void stop() {
        running.set(false);
        source.wakeup();
    }

    @Override
    public void close() {
        stop();
    }

    public BulkWriter writer() { return writer; }

    public SinkMetrics metrics() { return metrics; }
}
