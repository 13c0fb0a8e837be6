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
        // 20,000 RU in the last 600 ms (two calls 500 ms apart), then a call that met 429s: the RU charged in the last
        // second (the service's metering period), whenever in it they came.
        settleCall(p, 1000, 10_000, 1000, false);
        c.advanceMs(500);
        settleCall(p, 1000, 10_000, 1000, false);
        c.advanceMs(100);
        settleCall(p, 1000, 0, 0, true);
        assertThat(p.pacing()).isTrue();
        assertThat(p.rate()).isCloseTo(RuPacer.BACKOFF * 20_000, within(1.0));
    }

    @Test
    void whilePacingA429DropsTheRateToTheShareOfItTheServiceAdmitted() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(0, 1000, () -> c.now);
        settleCall(p, 1000, 10_000, 1000, true); // the first: consumed 10,000 RU/s -> BACKOFF x 10,000
        double first = RuPacer.BACKOFF * 10_000;
        assertThat(p.rate()).isCloseTo(first, within(1.0));
        c.advanceMs(200);
        settleCall(p, 1000, 10_000, 980, true); // sent after it, inside the cooldown
        assertThat(p.rate()).as("inside the cooldown").isCloseTo(first, within(1.0));
        c.advanceMs(1000);
        // The last second's answers: 1,000 operations, 100 of them 429. The RU booked (3,000, a lump that came late)
        // do not count: the rate drops by the refused share, then BACKOFF.
        settleCall(p, 600, 2_000, 600, false);
        c.advanceMs(100);
        settleCall(p, 400, 1_000, 300, true);
        assertThat(p.rate()).isCloseTo(RuPacer.BACKOFF * first * 0.9, within(1.0));
    }

    @Test
    void answersOfCallsOnTheWireAtTheFirst429RaiseTheRateItSet() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(0, 1000, () -> c.now);
        RuPacer.Ticket[] wire = new RuPacer.Ticket[4];
        for (int i = 0; i < wire.length; i++) wire[i] = p.reserve(1000); // an unpaced burst: all sent at once
        c.advanceMs(100);
        settleCall(p, 1000, 3_000, 300, true); // the first 429, with 3,000 RU charged so far
        assertThat(p.rate()).isCloseTo(RuPacer.BACKOFF * 3_000, within(1.0));
        c.advanceMs(100);
        p.settle(wire[0], 5_000, 500, true); // admitted before the 429, answered after it
        assertThat(p.rate()).isCloseTo(RuPacer.BACKOFF * 8_000, within(1.0));
        c.advanceMs(100);
        p.settle(wire[1], 0, 0, true); // nothing admitted: no change, and no second decrease
        assertThat(p.rate()).isCloseTo(RuPacer.BACKOFF * 8_000, within(1.0));
        c.advanceMs(1000);
        p.settle(wire[2], 9_000, 1000, true); // after the cooldown: old news, neither raise nor decrease
        assertThat(p.rate()).isCloseTo(RuPacer.BACKOFF * 8_000, within(1.0));
    }

    @Test
    void a429OnACallSentBeforeTheLastDecreaseDoesNotDecreaseAgain() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(10_000, 1000, () -> c.now);
        RuPacer.Ticket early = p.reserve(100); // sent at the full budget
        c.advanceMs(100);
        settleCall(p, 100, 500, 50, true); // decrease: BACKOFF x 10,000 x the half admitted
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
    void aBudgetBelowTheFloorIsTheCeilingStill() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(600, 1000, () -> c.now); // sink.ru-budget 600, sink.pacing.min-rate 1,000
        assertThat(p.rate()).isEqualTo(600);
        keepBusy(c, p, 10_000);
        assertThat(p.rate()).as("the floor never lifts the rate above the budget").isEqualTo(600);
        settleCall(p, 10, 0, 0, true);
        assertThat(p.rate()).as("nor does a 429 drop it below the floor, which is the budget here").isEqualTo(600);
    }

    @Test
    void aNewCeilingMovesTheRateInProportionAndBindsAtOnce() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(600, 100, () -> c.now);
        p.limit(200); // one of three sinks' share of the fleet's 600
        assertThat(p.ceiling()).isEqualTo(200);
        assertThat(p.rate()).isEqualTo(200);
        keepBusy(c, p, 5_000);
        assertThat(p.rate()).as("growth stops at the share").isEqualTo(200);
        // Demand far above the rate: calls of 500 RU back to back, each sent when the pacer says. What goes out in
        // 20 s is the share, however much is asked.
        long start = c.now;
        double sent = 0;
        while (c.now - start < 20_000 * MS) {
            RuPacer.Ticket call = p.reserve(50);
            c.now += call.waitNanos();
            if (!call.reserved()) continue;
            sent += call.estimate();
            p.settle(call, call.estimate(), 50, false);
        }
        assertThat(sent / ((c.now - start) / 1e9)).as("RU/s sent at a 200 RU/s share").isBetween(190.0, 230.0);

        p.limit(300); // a sink died: its partitions, and its share, moved here
        assertThat(p.rate()).isEqualTo(300);
        p.limit(150);
        assertThat(p.rate()).as("a smaller share binds at once").isEqualTo(150);
    }

    @Test
    void callsAreSpacedAtTheRateAndReserveNoFurtherAheadThanTheHorizon() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(10_000, 1000, () -> c.now);
        settleCall(p, 100, 1000, 100, false); // 10 RU per operation
        c.advanceMs(1000); // idle: the bucket holds BURST_SECONDS of the rate, 1,000 RU
        long[] waits = new long[4];
        for (int i = 0; i < 4; i++) waits[i] = p.reserve(100).waitNanos(); // 1,000 RU each, all at once
        // Each waits until the tokens taken before it are paid for: the first two had tokens.
        assertThat(waits[0]).isZero();
        assertThat(waits[1]).isZero();
        assertThat(waits[2]).isCloseTo(100 * MS, within(2L));
        assertThat(waits[3]).isCloseTo(200 * MS, within(2L));
        // 3,000 RU owed: more than HORIZON_SECONDS (2,000 RU) of the rate. The next call reserves nothing yet.
        RuPacer.Ticket fifth = p.reserve(100);
        assertThat(fifth.reserved()).isFalse();
        assertThat(fifth.waitNanos()).as("until the debt is back within the horizon").isCloseTo(100 * MS, within(2L));
        assertThat(p.tokens()).isCloseTo(-3000, within(1e-6));
        c.advanceMs(100);
        RuPacer.Ticket again = p.reserve(100);
        assertThat(again.reserved()).isTrue();
        assertThat(again.waitNanos()).as("behind the 2,000 RU still owed").isCloseTo(200 * MS, within(2L));
    }

    @Test
    void aDecreaseReachesTheCallsNotYetReserved() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(10_000, 1000, () -> c.now);
        while (p.reserve(100).reserved()) { } // 1,000 RU each, until more than the horizon is owed
        p.settle(new RuPacer.Ticket(100, 1000, 0, c.now, true), 500, 50, true); // half of a call answered 429
        double decreased = p.rate();
        assertThat(decreased).isCloseTo(RuPacer.BACKOFF * 10_000 * 0.5, within(1.0));
        RuPacer.Ticket later = p.reserve(100);
        assertThat(later.reserved()).isFalse();
        assertThat(later.waitNanos()).as("paid at the new rate, not at the rate the calls before it reserved at")
                .isCloseTo((long) ((-p.tokens() - RuPacer.HORIZON_SECONDS * decreased) / decreased * 1e9), within(2L));
    }

    @Test
    void theActualChargeReconcilesTheEstimate() {
        Clock c = new Clock();
        RuPacer p = new RuPacer(10_000, 1000, () -> c.now);
        RuPacer.Ticket t = p.reserve(100); // estimated at the initial 10 RU per operation
        assertThat(t.estimate()).isEqualTo(1000);
        assertThat(p.tokens()).isEqualTo(-1000);
        c.advanceMs(50); // +500
        p.settle(t, 100, 20, false); // 20 operations charged 5 RU each (the other 80 answered 429, say)
        assertThat(p.tokens()).as("the 100 RU the 20 did not spend come back; the 80 refused keep theirs")
                .isCloseTo(-500 + 200 - 100, within(1e-6));
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
            if (big.reserved()) p.settle(big, big.estimate(), ops, false);
            if (behind.reserved()) p.settle(behind, behind.estimate(), 1, false);
        }
    }
}
