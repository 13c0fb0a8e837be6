package io.tally.ingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LittleSizerTest {
    private static long ms(long ms) {
        return Duration.ofMillis(ms).toNanos();
    }

    @Test
    void concurrencyIsRateTimesLatencyOverCallSize() {
        LittleSizer s = new LittleSizer(20_000, 32, 20_000, 8);
        for (int i = 0; i < 8; i++) s.record(1000, ms(400));
        // 20,000 docs/s x 0.4 s per call / 1,000 docs per call = 8 calls in flight
        assertThat(s.target()).isEqualTo(8);
        assertThat(s.latencySeconds()).isEqualTo(0.4);
        assertThat(s.operationsPerCall()).isEqualTo(1000.0);
    }

    @Test
    void roundsUpSoTheRateIsReached() {
        LittleSizer s = new LittleSizer(10_000, 32, 100_000, 4);
        for (int i = 0; i < 4; i++) s.record(1000, ms(250)); // 2.5 calls
        assertThat(s.target()).isEqualTo(3);
    }

    @Test
    void longerCallsNeedMoreInFlight() {
        LittleSizer s = new LittleSizer(20_000, 32, 40_000, 8);
        for (int i = 0; i < 8; i++) s.record(1000, ms(100));
        int fast = s.target();
        for (int i = 0; i < 8; i++) s.record(1000, ms(600)); // 50 ms added to each of ten micro-batches
        assertThat(fast).isEqualTo(2);
        assertThat(s.target()).isEqualTo(12);
    }

    @Test
    void boundedByTheConcurrencyCeilingAndByMemory() {
        LittleSizer ceiling = new LittleSizer(100_000, 16, 1_000_000, 4);
        for (int i = 0; i < 4; i++) ceiling.record(1000, ms(1000));
        assertThat(ceiling.target()).isEqualTo(16);

        LittleSizer memory = new LittleSizer(100_000, 32, 20_000, 4);
        for (int i = 0; i < 4; i++) memory.record(1000, ms(1000));
        // 100 calls would be needed, but 20 calls of 1,000 documents already hold sink.max-in-flight-documents
        assertThat(memory.target()).isEqualTo(20);
    }

    @Test
    void smallCallsNeedMoreOfThemButStillWithinMemory() {
        LittleSizer s = new LittleSizer(2_000, 32, 20_000, 4);
        for (int i = 0; i < 4; i++) s.record(100, ms(50));
        assertThat(s.target()).isEqualTo(1);
        for (int i = 0; i < 4; i++) s.record(10, ms(50)); // 404 -> create follow-ups: small calls
        assertThat(s.target()).isEqualTo(10);
    }

    @Test
    void theFastestRecentCallSetsTheEstimateSoQueueingDoesNotFeedIt() {
        LittleSizer s = new LittleSizer(20_000, 32, 20_000, 6);
        s.record(1000, ms(5000)); // connection set-up
        for (int i = 0; i < 5; i++) s.record(1000, i % 2 == 0 ? ms(100) : ms(2000)); // some calls queued behind others
        assertThat(s.secondsPerOperation()).isEqualTo(0.0001);
        assertThat(s.target()).isEqualTo(2);
        assertThat(s.latencySeconds()).as("the exported median still shows the queueing").isEqualTo(2.0);
    }

    @Test
    void unknownUntilEnoughCallsAndOffWithoutATargetRate() {
        LittleSizer s = new LittleSizer(20_000, 32, 20_000, 32);
        for (int i = 0; i < LittleSizer.MIN_SAMPLES - 1; i++) s.record(1000, ms(500));
        assertThat(s.target()).isZero();
        s.record(1000, ms(500));
        assertThat(s.target()).isEqualTo(10);

        LittleSizer off = new LittleSizer(0, 32, 20_000, 4);
        for (int i = 0; i < 4; i++) off.record(1000, ms(500));
        assertThat(off.target()).isZero();
    }

    @Test
    void noFloorWhileTheCallsQueueBehindEachOther() {
        LittleSizer latency = new LittleSizer(20_000, 32, 20_000, 8);
        for (int i = 0; i < 8; i++) latency.record(i % 2 == 0 ? 1000 : 50, i % 2 == 0 ? ms(150) : ms(15)); // all ~10 ms slower
        assertThat(latency.queueing()).isFalse();
        assertThat(latency.floor(2)).isEqualTo(latency.target()).isEqualTo(3);

        LittleSizer queue = new LittleSizer(20_000, 32, 20_000, 8);
        for (int i = 0; i < 8; i++) queue.record(500, ms(100 + 400L * i)); // each waits behind the ones before it
        assertThat(queue.queueing()).isTrue();
        assertThat(queue.target()).isEqualTo(4);
        assertThat(queue.floor(2)).as("more calls would only lengthen the queue").isZero();
    }

    @Test
    void smallFollowUpCallsAreNoQueue() {
        LittleSizer s = new LittleSizer(20_000, 32, 20_000, 16, 100);
        for (int i = 0; i < 16; i++) s.record(i % 2 == 0 ? 1000 : 3, i % 2 == 0 ? ms(120) : ms(13)); // 10 requests of 12 ms, 1 of 13
        assertThat(s.queueing()).isFalse();
    }

    @Test
    void theFloorStepsAtMostDoubleOncePerRecentCalls() {
        LittleSizer s = new LittleSizer(20_000, 32, 20_000, 32);
        for (int i = 0; i < LittleSizer.RECENT; i++) s.record(1000, ms(1000)); // 20 calls needed
        assertThat(s.floor(4)).isEqualTo(8);
        assertThat(s.floor(8)).as("the next step waits for fresh calls").isZero();
        for (int i = 0; i < LittleSizer.RECENT; i++) s.record(1000, ms(1000));
        assertThat(s.floor(8)).isEqualTo(16);
        for (int i = 0; i < LittleSizer.RECENT; i++) s.record(1000, ms(1000));
        assertThat(s.floor(16)).isEqualTo(20);
    }
}
