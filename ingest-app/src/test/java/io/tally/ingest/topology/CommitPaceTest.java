package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class CommitPaceTest {
    private static final CommitPace PACE = CommitPace.of(Duration.ofMillis(166), Duration.ofSeconds(3), Duration.ofSeconds(2));

    @Test
    void pacedOnlyWhenTheBacklogIntervalIsTheLongerOne() {
        assertThat(PACE.paced()).isTrue();
        assertThat(CommitPace.of(Duration.ofMillis(166), Duration.ofMillis(166), Duration.ofSeconds(2))).isEqualTo(CommitPace.NONE);
        assertThat(CommitPace.of(Duration.ofSeconds(5), Duration.ofSeconds(3), Duration.ofSeconds(2)).paced()).isFalse();
    }

    @Test
    void asksForACommitWhileItsRecordsKeepUp() {
        CommitPace.Task task = new CommitPace.Task(PACE);
        long now = 1_000_000;
        assertThat(task.wantsCommit(now)).as("nothing processed since the last commit").isFalse();
        task.processed(now - 300, now);
        assertThat(task.wantsCommit(now + 10)).isTrue();
        task.committed(now + 15);
        assertThat(task.wantsCommit(now + 20)).as("committed, nothing new").isFalse();
    }

    @Test
    void waitsForTheLongIntervalWhileRecordsKeepComingLate() {
        CommitPace.Task task = new CommitPace.Task(PACE);
        long now = 1_000_000;
        task.processed(now - 60_000, now);
        task.processed(now - 2_001, now + 100); // the newest is just past twice the target
        assertThat(task.wantsCommit(now + 100)).isFalse();
        assertThat(task.wantsCommit(now + 265)).as("a record came within the fresh interval").isFalse();
    }

    @Test
    void asksForACommitAtTheEndOfABacklog() {
        CommitPace.Task task = new CommitPace.Task(PACE);
        long now = 1_000_000;
        task.processed(now - 60_000, now);
        assertThat(task.wantsCommit(now + 165)).isFalse();
        assertThat(task.wantsCommit(now + 166)).as("no record for a fresh interval: the next stage waits on this commit").isTrue();
    }

    @Test
    void oneLateRecordAmongFreshOnesStillKeepsUp() {
        CommitPace.Task task = new CommitPace.Task(PACE);
        long now = 1_000_000;
        task.processed(now - 200, now);
        task.processed(now - 90_000, now); // a straggler: the newest decides
        assertThat(task.wantsCommit(now + 1)).isTrue();
    }

    @Test
    void aTaskWaitingItsTurnMidDrainDoesNotCommitWhileItsThreadIsBusy() {
        long[] thread = new long[1];
        CommitPace.Task waiting = new CommitPace.Task(PACE, thread), busy = new CommitPace.Task(PACE, thread);
        long now = 1_000_000;
        waiting.processed(now - 60_000, now);
        busy.processed(now - 59_000, now + 300);
        assertThat(waiting.wantsCommit(now + 400)).as("its thread took a record 100 ms ago").isFalse();
        assertThat(waiting.wantsCommit(now + 466)).as("the thread has been idle for a fresh interval").isTrue();
    }

    @Test
    void aFreshRecordAfterAQuietIntervalCommitsAtOnceAndOneSoonAfterWaitsForTheInterval() {
        long[] thread = CommitPace.newClock();
        CommitPace.Task task = new CommitPace.Task(PACE, thread);
        long now = 1_000_000;
        task.processed(now - 50, now);
        assertThat(task.commitsAtOnce(now)).as("the thread has never committed").isTrue();
        task.committed(now + 5);
        task.processed(now + 40, now + 45);
        assertThat(task.commitsAtOnce(now + 45)).as("40 ms after the last commit").isFalse();
        assertThat(task.untilDue(now + 45)).as("due a fresh interval after the last commit").isEqualTo(126);
        assertThat(task.commitsAtOnce(now + 171)).isTrue();
        assertThat(task.untilDue(now + 500)).as("overdue: at the next look").isEqualTo(1);
    }

    @Test
    void aLateRecordNeverCommitsAtOnce() {
        CommitPace.Task task = new CommitPace.Task(PACE, CommitPace.newClock());
        long now = 1_000_000;
        task.processed(now - 60_000, now);
        assertThat(task.commitsAtOnce(now)).isFalse();
        assertThat(task.untilDue(now)).as("never committed: looked at at once, then every fresh interval while it stays behind").isEqualTo(1);
    }

    @Test
    void stageFiveBehindStageThreeOnTheSameThreadWaitsAQuarterIntervalNotAWholeOne() {
        long[] thread = CommitPace.newClock();
        CommitPace.Task stage3 = new CommitPace.Task(PACE, thread), stage5 = new CommitPace.Task(PACE, thread);
        long now = 1_000_000;
        stage3.processed(now - 20, now);
        assertThat(stage3.commitsAtOnce(now)).isTrue();
        stage3.committed(now + 2); // the thread's commit makes the event readable to stage 5
        stage5.processed(now - 20, now + 30);
        assertThat(stage5.commitsAtOnce(now + 30)).as("28 ms after the thread's commit").isFalse();
        assertThat(stage5.untilDue(now + 30)).as("a quarter interval after it").isEqualTo(2 + 166 / 4 - 30);
        assertThat(stage5.commitsAtOnce(now + 2 + 41)).isTrue();

        stage3.committed(now + 45); // a commit both took part in
        stage5.committed(now + 45);
        stage3.processed(now + 40, now + 60);
        stage5.processed(now + 40, now + 60);
        assertThat(stage3.untilDue(now + 60)).as("both took part in a commit lately: the fresh interval").isEqualTo(45 + 166 - 60);
        assertThat(stage5.untilDue(now + 60)).isEqualTo(45 + 166 - 60);
    }
}
