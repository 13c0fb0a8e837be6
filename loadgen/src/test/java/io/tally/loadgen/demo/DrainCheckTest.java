package io.tally.loadgen.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DrainCheckTest {
    static Progress progress(long ingested, long aggLag, long docs, long sinkLag, long inFlight) {
        return new Progress(ingested, aggLag, 500, 0, 500 - sinkLag, docs, 0, 0, 0, 0, sinkLag, inFlight);
    }

    @Test
    void drainedAfterThreeQuietSecondsWithEverythingRead() {
        DrainCheck check = new DrainCheck();
        Progress done = progress(1000, 0, 400, 0, 0);

        assertThat(check.drained(done, 1000)).isFalse(); // the first sight: nothing to compare with
        assertThat(check.drained(done, 1000)).isFalse();
        assertThat(check.drained(done, 1000)).isFalse();
        assertThat(check.drained(done, 1000)).isTrue();
    }

    @Test
    void aCounterThatMovesStartsTheQuietOver() {
        DrainCheck check = new DrainCheck();
        check.drained(progress(1000, 0, 398, 0, 0), 1000);
        check.drained(progress(1000, 0, 398, 0, 0), 1000);
        check.drained(progress(1000, 0, 398, 0, 0), 1000);

        assertThat(check.drained(progress(1000, 0, 400, 0, 0), 1000)).isFalse();
        assertThat(check.drained(progress(1000, 0, 400, 0, 0), 1000)).isFalse();
        assertThat(check.drained(progress(1000, 0, 400, 0, 0), 1000)).isFalse();
        assertThat(check.drained(progress(1000, 0, 400, 0, 0), 1000)).isTrue();
    }

    @Test
    void notDrainedWhileAnythingIsUnreadOrInFlight() {
        for (Progress p : new Progress[] {progress(999, 0, 400, 0, 0), progress(1000, 1, 400, 0, 0), progress(1000, 0, 400, 0, 2)}) {
            DrainCheck check = new DrainCheck();
            for (int second = 0; second < 20; second++) assertThat(check.drained(p, 1000)).as("%s", p).isFalse();
        }
    }

    @Test
    void updatesTheSinkNeverReadsWaitTenQuietSeconds() {
        DrainCheck check = new DrainCheck();
        Progress aborted = progress(1000, 0, 400, 3, 0);

        for (int second = 0; second < DrainCheck.QUIET_SECONDS_WITH_SINK_LAG; second++) {
            assertThat(check.drained(aborted, 1000)).as("second %d", second).isFalse();
        }
        assertThat(check.drained(aborted, 1000)).isTrue();
    }
}
