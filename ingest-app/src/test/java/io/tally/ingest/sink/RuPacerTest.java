package io.tally.ingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RuPacerTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** A hand-driven clock: the pacer sees only the time the test sets. */
    private static final class Clock {
        long now = 1_000_000 * MS;

        void advanceMs(long ms) { now += ms * MS; }
    }

    @Test
    void withoutABudgetNothingWaitsUntilTheFirst429() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(0, 1000, () -> c.now);
        for (int i = 0; i < 50; i++) {
            RuPacer.Ticket t = p.reserve(1000);
            assertThat(t.waitNanos()).isZero();
            p.settle(t, 8_890, 1000, false);
        }
        assertThat(p.pacing()).isFalse();
        assertThat(p.rate()).as("exported as 0 while not pacing").isZero();
        assertThat(p.maxOperations()).isEqualTo(Integer.MAX_VALUE);
        assertThat(p.ruPerOperation()).as("learned from the charges").isCloseTo(8.89, within(0.01));
    }

    @Test
    void a429SetsTheRateToTheBackoffShareOfWhatWasConsumedRecently() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(0, 1000, () -> c.now);
        // 20,000 RU in the last 600 ms (two calls 500 ms apart), then a call that met 429s: per second of the window
        // since the first booking, at least one second (an idle second before the burst is not averaged in).
        settleCall(p, 1000, 10_000, 1000, false);
        c.advanceMs(500);
        settleCall(p, 1000, 10_000, 1000, false);
        c.advanceMs(100);
        settleCall(p, 1000, 0, 0, true);
        assertThat(p.pacing()).isTrue();
        assertThat(p.rate()).isCloseTo(RuPacer.BACKOFF * 20_000, within(1.0));
    }

    @Test
    void throttlesWithinTheCooldownCountOnceAndNeverAboveTheCurrentRate() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(0, 1000, () -> c.now);
        settleCall(p, 1000, 10_000, 1000, true); // consumed 10,000 RU/s -> BACKOFF x 10,000
        assertThat(p.rate()).isCloseTo(RuPacer.BACKOFF * 10_000, within(1.0));
        c.advanceMs(200);
        settleCall(p, 1000, 10_000, 1000, true); // same burst
        assertThat(p.rate()).as("inside the cooldown").isCloseTo(RuPacer.BACKOFF * 10_000, within(1.0));
        c.advanceMs(1000);
        settleCall(p, 2000, 30_000, 2000, true); // 50,000 RU in the last 1.2 s: more than the rate
        assertThat(p.rate()).as("min(rate, consumed) x BACKOFF: a throttle never raises the rate")
                .isCloseTo(RuPacer.BACKOFF * RuPacer.BACKOFF * 10_000, within(1.0));
    }

    @Test
    void a429OnACallSentBeforeTheLastDecreaseDoesNotDecreaseAgain() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(10_000, 1000, () -> c.now);
        RuPacer.Ticket early = p.reserve(100); // sent at the full budget
        c.advanceMs(100);
        settleCall(p, 100, 1000, 100, true); // decrease: BACKOFF x min(10,000, 1,000 RU/s) = floor
        double after = p.rate();
        c.advanceMs(1500); // past the cooldown
        p.settle(early, 0, 0, true); // still answering 429: old news
        assertThat(p.rate()).isEqualTo(after);
    }

    @Test
    void neverBelowTheFloorNorAboveTheCeiling() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(0, 1000, () -> c.now);
        settleCall(p, 10, 0, 0, true); // every operation 429, nothing consumed (an injected storm)
        assertThat(p.rate()).isEqualTo(1000);

        RuPacer budgeted = new RuPacer(3000, 1000, () -> c.now);
        assertThat(budgeted.pacing()).as("a budget is known from the start").isTrue();
        assertThat(budgeted.rate()).isEqualTo(3000);
        keepBusy(c, budgeted, 10_000); // limited and unthrottled for 10 s
        assertThat(budgeted.rate()).as("growth stops at sink.ru-budget").isEqualTo(3000);
    }

    @Test
    void callsAreSpacedAtTheRateAcrossTheSecond() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(10_000, 1000, () -> c.now);
        settleCall(p, 100, 1000, 100, false); // 10 RU per operation
        c.advanceMs(1000); // idle: the bucket holds BURST_SECONDS of the rate, 1,000 RU
        long[] waits = new long[5];
        for (int i = 0; i < 5; i++) waits[i] = p.reserve(200).waitNanos(); // 2,000 RU each, all at once
        assertThat(waits[0]).as("the bucket had tokens").isZero();
        // Each waits until the tokens taken before it are paid for: 1,000 RU of debt after the first, then 2,000 more each.
        assertThat(waits[1]).isCloseTo(100 * MS, within(2L));
        assertThat(waits[2]).isCloseTo(300 * MS, within(2L));
        assertThat(waits[4]).isCloseTo(700 * MS, within(2L));
    }

    @Test
    void theActualChargeReconcilesTheEstimate() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(10_000, 1000, () -> c.now);
        RuPacer.Ticket t = p.reserve(100); // estimated at the initial 10 RU per operation
        assertThat(t.estimate()).isEqualTo(1000);
        assertThat(p.tokens()).isEqualTo(-1000);
        c.advanceMs(50); // +500
        p.settle(t, 100, 20, false); // 20 operations charged 5 RU each (the other 80, say, not answered)
        assertThat(p.tokens()).as("the 900 RU not spent come back").isCloseTo(-500 + 900, within(1e-6));
        assertThat(p.ruPerOperation()).as("weighted by the 20 operations that carried the charge")
                .isCloseTo(10 + (1 - Math.pow(0.8, 0.2)) * (5 - 10), within(1e-9));
    }

    @Test
    void afterA429ItProbesBackUpGentlyNearTheLimitAndFastAwayFromIt() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(0, 1000, () -> c.now);
        settleCall(p, 1000, 10_000, 1000, true); // rate BACKOFF x 10,000, mark 10,000
        double decreased = RuPacer.BACKOFF * 10_000;
        keepBusy(c, p, 950); // the cooldown: no growth
        assertThat(p.rate()).isCloseTo(decreased, within(1.0));
        keepBusy(c, p, 2050); // near the mark: +PROBE_PER_SECOND per second from the end of the cooldown
        double probe = 1 + RuPacer.PROBE_PER_SECOND;
        assertThat(p.rate()).isCloseTo(decreased * probe * probe, within(5.0));

        RuPacer storm = new RuPacer(0, 1000, () -> c.now);
        settleCall(storm, 10, 0, 0, true); // floor, mark 0: far from it
        keepBusy(c, storm, 3000);
        double seek = 1 + RuPacer.SEEK_PER_SECOND;
        assertThat(storm.rate()).as("1000 x (1 + SEEK_PER_SECOND)^2 after the 1 s cooldown").isCloseTo(1000 * seek * seek, within(5.0));
    }

    @Test
    void anIdleSinkDoesNotGrowTheRate() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(0, 1000, () -> c.now);
        settleCall(p, 1000, 10_000, 1000, true);
        c.advanceMs(60_000); // nothing to write for a minute
        p.reserve(1);
        assertThat(p.rate()).as("only a rate that holds the sink back is probed").isCloseTo(RuPacer.BACKOFF * 10_000, within(1.0));
    }

    @Test
    void callsAreCutToATenthOfASecondOfTheRate() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(17_000, 1000, () -> c.now);
        settleCall(p, 1000, 8_500, 1000, false); // 8.5 RU per operation (weight 0.89 from the initial 10)
        assertThat(p.maxOperations()).isEqualTo((int) Math.floor(1700 / p.ruPerOperation()));
        RuPacer slow = new RuPacer(5, 5, () -> c.now);
        assertThat(slow.maxOperations()).as("at least one operation").isEqualTo(1);
    }

    private static void settleCall(RuPacer p, int ops, double charge, int charged, boolean throttled) {
        p.settle(p.reserve(ops), charge, charged, throttled);
    }

    /**
     * Demand above the rate for {@code ms}, no 429: every 50 ms a call of a second's worth (into debt) and one behind it
     * that has to wait, both charged what they were estimated at.
     */
    private static void keepBusy(Clock c, RuPacer p, long ms) {
        for (long t = 0; t < ms; t += 50) {
            c.advanceMs(50);
            int ops = (int) (p.rate() / p.ruPerOperation()) + 1;
            RuPacer.Ticket big = p.reserve(ops);
            RuPacer.Ticket behind = p.reserve(1);
            assertThat(behind.waitNanos()).isPositive();
            p.settle(big, big.estimate(), ops, false);
            p.settle(behind, behind.estimate(), 1, false);
        }
    }
}
