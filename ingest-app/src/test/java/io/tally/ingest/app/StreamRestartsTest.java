package io.tally.ingest.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tally.schemas.serde.SchemaRegistryException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.junit.jupiter.api.Test;

class StreamRestartsTest {
    final AtomicLong now = new AtomicLong(1_000_000);
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    @Test
    void waitsDoubleFromTheInitialUpToTheMaximum() {
        StreamRestarts.Backoff b = new StreamRestarts.Backoff(Duration.ofMillis(500), Duration.ofSeconds(5));
        assertThat(java.util.stream.IntStream.rangeClosed(1, 7).mapToObj(n -> b.before(n).toMillis()).toList())
                .containsExactly(500L, 1000L, 2000L, 4000L, 5000L, 5000L, 5000L);
        assertThat(b.before(1000).toMillis()).as("no overflow").isEqualTo(5000L);
    }

    @Test
    void aSeriesOfFailuresBacksOffAndAReplacementThatOutlivesTheLongestWaitEndsIt() {
        StreamRestarts r = new StreamRestarts(new StreamRestarts.Backoff(Duration.ofSeconds(1), Duration.ofSeconds(8)), meters, now::get);
        assertThat(r.recordFailure(StreamRestarts.Cause.OTHER)).isEqualTo(Duration.ofSeconds(1));
        assertThat(r.backingOff()).isTrue();
        assertThat(r.consecutiveFailures()).isEqualTo(1);
        assertThat(r.recordFailure(StreamRestarts.Cause.OTHER)).isEqualTo(Duration.ofSeconds(2));
        assertThat(r.recordFailure(StreamRestarts.Cause.OTHER)).isEqualTo(Duration.ofSeconds(4));
        now.addAndGet(4_000);
        assertThat(r.backingOff()).isFalse();
    }

    @Test
    void handleWaitsReplacesAndCountsByCause() {
        StreamRestarts r = new StreamRestarts(new StreamRestarts.Backoff(Duration.ofMillis(50), Duration.ofMillis(200)), meters);
        SchemaRegistryException down = new SchemaRegistryException(-1, -1, "connection refused", new java.net.ConnectException());
        long t0 = System.nanoTime();
        assertThat(r.handle(new StreamsException(down))).isEqualTo(StreamThreadExceptionResponse.REPLACE_THREAD);
        assertThat(r.handle(new StreamsException(down))).isEqualTo(StreamThreadExceptionResponse.REPLACE_THREAD);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("50 + 100 ms waited").isGreaterThanOrEqualTo(Duration.ofMillis(150));
        r.handle(new IllegalStateException("a bug"));
        assertThat(meters.counter("tally.ingest.stream.thread.failures", "cause", "registry-unavailable").count()).isEqualTo(2);
        assertThat(meters.counter("tally.ingest.stream.thread.failures", "cause", "other").count()).isEqualTo(1);
        assertThat(r.lastCause()).isEqualTo(StreamRestarts.Cause.OTHER);
        assertThat(r.consecutiveFailures()).isEqualTo(3);
        assertThat(r.backingOff()).as("the wait is over once the thread is replaced").isFalse();
        assertThat(r.rejoining()).as("the replacement has not started working").isTrue();
        r.streamsStateChanged(org.apache.kafka.streams.KafkaStreams.State.REBALANCING);
        assertThat(r.rejoining()).isTrue();
        r.streamsStateChanged(org.apache.kafka.streams.KafkaStreams.State.RUNNING);
        assertThat(r.rejoining()).isFalse();
    }

    @Test
    void aReplacementThatRunsLongerThanTheLongestWaitStartsTheSeriesAgain() throws Exception {
        StreamRestarts r = new StreamRestarts(new StreamRestarts.Backoff(Duration.ofMillis(1), Duration.ofMillis(4)), meters, now::get);
        r.handle(new IllegalStateException("1"));
        r.handle(new IllegalStateException("2"));
        assertThat(r.consecutiveFailures()).isEqualTo(2);
        now.addAndGet(5); // the replacement ran 5 ms > 4 ms without failing
        assertThat(r.consecutiveFailures()).isZero();
        assertThat(r.recordFailure(StreamRestarts.Cause.OTHER)).isEqualTo(Duration.ofMillis(1));
    }

    @Test
    void closingEndsAWaitAtOnce() {
        StreamRestarts r = new StreamRestarts(new StreamRestarts.Backoff(Duration.ofMinutes(5), Duration.ofMinutes(5)), meters);
        r.close();
        long t0 = System.nanoTime();
        r.handle(new IllegalStateException("during shutdown"));
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void theBackoffComesFromTheSettings() {
        IngestSettings s = IngestSettings.load(new String[] {"--ingest.restart-backoff.initial.ms=250", "--ingest.restart-backoff.max.ms=4000"},
                java.util.Map.of());
        assertThat(s.aggregation().restartBackoff()).isEqualTo(new StreamRestarts.Backoff(Duration.ofMillis(250), Duration.ofSeconds(4)));
        assertThat(IngestSettings.load(new String[0], java.util.Map.of()).aggregation().restartBackoff())
                .isEqualTo(new StreamRestarts.Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30)));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> IngestSettings.load(new String[] {"--ingest.restart-backoff.max.ms=0"}, java.util.Map.of()))
                .hasMessageContaining("ingest.restart-backoff.max.ms");
    }

    @Test
    void onlyARetriableRegistryFailureCountsAsTheRegistryBeingUnavailable() {
        assertThat(StreamRestarts.Cause.of(new StreamsException(new SchemaRegistryException(503, -1, "busy", null))))
                .isEqualTo(StreamRestarts.Cause.REGISTRY_UNAVAILABLE);
        assertThat(StreamRestarts.Cause.of(new StreamsException(new SchemaRegistryException(401, -1, "who are you", null))))
                .isEqualTo(StreamRestarts.Cause.OTHER);
        assertThat(StreamRestarts.Cause.of(new RuntimeException("x"))).isEqualTo(StreamRestarts.Cause.OTHER);
    }
}
