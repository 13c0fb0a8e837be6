package io.tally.ingest.sink;

import static io.tally.ingest.sink.SinkFixtures.doc;
import static io.tally.ingest.sink.SinkFixtures.record;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.config.Config;
import io.tally.ingest.sink.BulkExecutor.ItemResult;
import io.tally.model.EntityBucketJson;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The writer against a scripted executor: per-item statuses without Cosmos. */
class BulkWriterTest {
    private static final TopicPartition P0 = new TopicPartition("t", 0);

    /** Per bucket id, the statuses of its next attempts ("404", "429:50" = retry-after 50 ms); then 200 for patches, 201 for creates. */
    static final class Script implements BulkExecutor {
        final Map<String, Deque<String>> next = new ConcurrentHashMap<>();
        final List<String> calls = new CopyOnWriteArrayList<>(); // "id:KIND"
        final AtomicInteger concurrent = new AtomicInteger();
        volatile int maxConcurrent;
        volatile Duration latency = Duration.ofMillis(2);

        Script on(String id, String... statuses) {
            next.computeIfAbsent(id, k -> new ArrayDeque<>()).addAll(List.of(statuses));
            return this;
        }

        @Override
        public Flux<ItemResult> execute(List<BucketWrite> writes) {
            return Mono.defer(() -> { // a call counts as concurrent from its start to its answer
                maxConcurrent = Math.max(maxConcurrent, concurrent.incrementAndGet());
                return Mono.delay(latency);
            }).flatMapMany(t -> {
                List<ItemResult> out = new ArrayList<>();
                for (BucketWrite w : writes) {
                    calls.add(w.doc.id() + ":" + w.kind);
                    String s = next.getOrDefault(w.doc.id(), new ArrayDeque<>()).poll();
                    if (s == null) s = w.kind == WriteKind.CREATE ? "201" : "200";
                    String[] parts = s.split(":");
                    Duration retryAfter = Duration.ofMillis(parts.length > 1 ? Long.parseLong(parts[1]) : 0);
                    out.add(new ItemResult(w, Integer.parseInt(parts[0]), 0, retryAfter, 1.0, null));
                }
                concurrent.decrementAndGet();
                Collections.shuffle(out);
                return Flux.fromIterable(out);
            });
        }
    }

    static final class Dlq implements DeadLetterPublisher {
        final List<String> published = new CopyOnWriteArrayList<>();

        @Override
        public Mono<Void> publish(BucketWrite write, DeadLetter letter) {
            published.add(write.doc == null ? write.key + " " + letter : write.doc.id() + " " + letter);
            return Mono.empty();
        }
    }

    private static SinkSettings settings(String... flags) {
        List<String> all = new ArrayList<>(List.of("--sink.retry.initial-backoff.ms=5", "--sink.retry.max-backoff.ms=40"));
        all.addAll(List.of(flags));
        return SinkSettings.from(Config.load(SinkSettings.ALL, List.of(), all.toArray(String[]::new), Map.of()));
    }

    private final Script script = new Script();
    private final Dlq dlq = new Dlq();
    private final OffsetTracker tracker = new OffsetTracker();

    private BulkWriter writer(SinkSettings s) {
        return new BulkWriter(s, script, dlq, new SinkMetrics(new SimpleMeterRegistry()));
    }

    /** Writes one window of the given documents (one record each, offsets from 0) and returns it. */
    private Coalescer.Window submit(BulkWriter w, String... ids) {
        Coalescer c = new Coalescer(EntityBucketJson::parts);
        for (int i = 0; i < ids.length; i++) c.add(record("t", 0, i, doc("e" + i % 3, ids[i], 5)));
        Coalescer.Window window = c.drain();
        tracker.register(window.segments());
        window.writes().forEach(c::decode);
        w.submit(window.writes());
        return window;
    }

    private static void await(java.util.function.BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("not done within 10 s");
            Thread.sleep(5);
        }
    }

    @Test
    void writesBehindLiveOnesAreCountedInFlightUntilDurable() throws Exception {
        script.latency = Duration.ofMillis(200);
        try (BulkWriter w = writer(settings())) {
            Coalescer c = new Coalescer(EntityBucketJson::parts);
            for (int i = 0; i < 3; i++) c.add(record("t", 0, i, doc("e", "d" + i, 5)));
            Coalescer.Window window = c.drain();
            window.writes().forEach(c::decode);
            window.writes().get(0).behind = true;
            window.writes().get(1).behind = true;
            w.submit(window.writes());
            assertThat(w.inFlightDocuments()).isEqualTo(3);
            assertThat(w.behindInFlightDocuments()).isEqualTo(2);
            await(() -> w.inFlightDocuments() == 0);
            assertThat(w.behindInFlightDocuments()).isZero();
        }
    }

    @Test
    void aMissingBucketIsCreatedAndAStaleOneCountsAsWritten() throws Exception {
        script.on("new", "404").on("stale", "412").on("raced", "404", "409");
        try (BulkWriter w = writer(settings())) {
            submit(w, "new", "stale", "raced", "plain");
            await(() -> w.inFlightDocuments() == 0);
        }
        assertThat(script.calls).contains("new:PATCH_IF_NEWER", "new:CREATE", "raced:CREATE");
        assertThat(script.calls.stream().filter(c -> c.startsWith("raced:"))).containsExactly(
                "raced:PATCH_IF_NEWER", "raced:CREATE", "raced:PATCH_IF_NEWER");
        assertThat(script.calls.stream().filter(c -> c.startsWith("stale:"))).hasSize(1);
        assertThat(tracker.committable()).isEqualTo(Map.of(P0, new OffsetAndMetadata(4)));
        assertThat(dlq.published).isEmpty();
    }

    @Test
    void transientStatusesAreRetriedHonouringRetryAfterAndThrottlingCutsConcurrency() throws Exception {
        script.on("a", "429:150", "503", "408", "410", "449");
        try (BulkWriter w = writer(settings("--sink.concurrency.initial=8"))) {
            long t0 = System.nanoTime();
            submit(w, "a", "b");
            await(() -> w.inFlightDocuments() == 0);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("waited the retry-after").isGreaterThanOrEqualTo(Duration.ofMillis(150));
            assertThat(w.concurrencyLimit()).as("halved once for the 429/503/408 burst (1 s cooldown)").isLessThan(8);
        }
        assertThat(script.calls.stream().filter(c -> c.startsWith("a:"))).hasSize(6);
        assertThat(tracker.committable()).isEqualTo(Map.of(P0, new OffsetAndMetadata(2)));
    }

    @Test
    void aRejectedDocumentGoesToTheDlqAndTheRestIsWritten() throws Exception {
        script.on("poison", "400");
        try (BulkWriter w = writer(settings())) {
            submit(w, "ok1", "poison", "ok2");
            await(() -> w.inFlightDocuments() == 0);
        }
        assertThat(dlq.published).singleElement().asString().startsWith("poison COSMOS_REFUSED: Cosmos answered 400/0");
        assertThat(script.calls).contains("ok1:PATCH_IF_NEWER", "ok2:PATCH_IF_NEWER");
        assertThat(tracker.committable()).isEqualTo(Map.of(P0, new OffsetAndMetadata(3)));
    }

    @Test
    void pastTheRetryBoundTheWriterStallsKeepsRetryingAndNeverCommitsPastIt() throws Exception {
        script.on("stuck", "503", "503", "503", "503", "503", "503");
        try (BulkWriter w = writer(settings("--sink.retry.max-attempts=3"))) {
            submit(w, "stuck", "fine");
            await(w::stalled);
            assertThat(tracker.committable()).as("nothing committed behind a stalled write").isEmpty();
            await(() -> w.inFlightDocuments() == 0);
            assertThat(w.stalled()).isFalse();
        }
        assertThat(script.calls.stream().filter(c -> c.startsWith("stuck:"))).hasSize(7);
        assertThat(tracker.committable()).isEqualTo(Map.of(P0, new OffsetAndMetadata(2)));
    }

    @Test
    void throttlingPastTheRetryBoundSlowsTheWriteButNeverStallsIt() throws Exception {
        script.on("busy", "429:5", "429:5", "429:5", "429:5", "429:5", "429:5", "429:5", "429:5");
        List<Boolean> stalledSeen = new CopyOnWriteArrayList<>();
        try (BulkWriter w = writer(settings("--sink.retry.max-attempts=3"))) {
            submit(w, "busy", "fine");
            while (w.inFlightDocuments() > 0) {
                stalledSeen.add(w.stalled());
                Thread.sleep(1);
            }
        }
        assertThat(stalledSeen).as("eight 429s in a row, past max-attempts=3, never stall the writer").doesNotContain(true);
        assertThat(script.calls.stream().filter(c -> c.startsWith("busy:"))).hasSize(9);
        assertThat(tracker.committable()).isEqualTo(Map.of(P0, new OffsetAndMetadata(2)));
    }

    @Test
    void abandonedPartitionsAreNeverWrittenAgainNorCommitted() throws Exception {
        script.on("gone", "503:300");
        try (BulkWriter w = writer(settings())) {
            submit(w, "gone");
            await(() -> script.calls.size() == 1);
            w.abandon(List.of(P0));
            assertThat(w.awaitPartitions(List.of(P0), Duration.ofSeconds(5))).isTrue();
        }
        assertThat(script.calls).containsExactly("gone:PATCH_IF_NEWER");
        assertThat(tracker.committable()).isEmpty();
    }

    @Test
    void concurrencyStaysWithinTheLimit() throws Exception {
        String[] ids = new String[200];
        for (int i = 0; i < ids.length; i++) ids[i] = "id" + i;
        try (BulkWriter w = writer(settings("--sink.bulk.chunk-size=100", "--sink.bulk.micro-batch-size=10",
                "--sink.concurrency.initial=1", "--sink.concurrency.max=1"))) {
            submit(w, ids);
            await(() -> w.inFlightDocuments() == 0);
        }
        assertThat(script.maxConcurrent).isEqualTo(1);
        assertThat(tracker.committable()).isEqualTo(Map.of(P0, new OffsetAndMetadata(200)));
    }

    /**
     * 600 documents in calls of 10 that take 100 ms each (long enough that a loaded machine's late timers do not look
     * like queueing); returns {Little's-law target after the last call, highest limit}
     * (the highest: on a loaded machine late timers can look like queueing and cut the limit afterwards).
     */
    private int[] writeSlowly(String targetRate) throws Exception {
        String[] ids = new String[600];
        for (int i = 0; i < ids.length; i++) ids[i] = "id" + i;
        script.latency = Duration.ofMillis(100);
        try (BulkWriter w = writer(settings("--sink.bulk.chunk-size=10", "--sink.bulk.micro-batch-size=10",
                "--sink.concurrency.initial=1", "--sink.target-rate=" + targetRate))) {
            submit(w, ids);
            int[] highest = {0};
            await(() -> {
                highest[0] = Math.max(highest[0], w.concurrencyLimit());
                return w.inFlightDocuments() == 0;
            });
            return new int[] {w.targetConcurrency(), highest[0]};
        }
    }

    @Test
    void slowCallsLiftTheLimitToTheLittlesLawTargetQuickly() throws Exception {
        // 10,000 docs/s x >= 100 ms per call / 10 docs per call: >= 100 calls in flight, 32 at most (sink.concurrency.max).
        // AIMD alone, from 1, reaches about 11 within these 60 calls; a doubling per 8 calls reaches 32 after 40.
        int[] targetAndLimit = writeSlowly("10000");
        assertThat(targetAndLimit[0]).isGreaterThanOrEqualTo(20);
        assertThat(targetAndLimit[1]).isGreaterThanOrEqualTo(20);
        assertThat(script.maxConcurrent).as("more calls actually went out together").isGreaterThan(12);
    }

    @Test
    void withoutATargetRateTheLimitGrowsByAimdAlone() throws Exception {
        int[] targetAndLimit = writeSlowly("0");
        assertThat(targetAndLimit[0]).isZero();
        assertThat(targetAndLimit[1]).isLessThan(20);
    }
}
