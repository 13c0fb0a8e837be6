package io.tally.ingest.topology;

import java.time.Duration;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/**
 * How often stages 3 and 5 commit: Kafka Streams' commit interval is the long one ({@code
 * ingest.backlog.commit-interval.ms}), and while the records a task takes keep up, the task asks for a commit
 * {@code freshInterval} (the freshness target's commit interval) after its thread's last one, or at once when that is
 * already longer ago (or, for a task left out of the thread's commits that long, a quarter interval after the last), so
 * a sparse event does not wait out an interval at each of the two stages. Each commit emits every bucket changed since
 * the last one, whole: while a backlog drains, nobody waits on each second, and a busy document emitted once per three
 * seconds instead of six times a second is encoded, sent, stored, parsed by the sink and collected that many times
 * fewer (./tally bench aggregation at 51 rules). Exactly-once is untouched: what a task holds still goes out inside
 * the transaction that commits its input.
 *
 * <p>"Keep up" is judged by record timestamps, as the sink judges a late bucket: the newest record a task processed
 * since its last commit is at most {@code behindAfter} (twice the freshness target) old. Producers that stamp records
 * with event times far in the past make every record look late, and the aggregation then commits at the long interval.
 * A task that took records since its last commit asks for a commit too, whatever their age, once its stream thread has
 * processed nothing for a fresh interval: the end of a backlog, which the next stage (reading the repartition topic
 * read-committed) would otherwise wait the rest of the long interval for. The thread, not the task: a thread serves its
 * tasks in turns, so one task alone often waits a while mid-drain.
 *
 * @param freshInterval   the commit interval while keeping up; zero for no pace (Kafka Streams' interval alone)
 * @param backlogInterval the commit interval while behind: Kafka Streams' own, when paced
 * @param behindAfter     how old the newest record may be for the task to count as keeping up
 */
public record CommitPace(Duration freshInterval, Duration backlogInterval, Duration behindAfter) {
    /** No commits asked for: Kafka Streams' commit interval alone (tests, the backfill's history). */
    public static final CommitPace NONE = new CommitPace(Duration.ZERO, Duration.ZERO, Duration.ZERO);

    /** Paced when the backlog interval is the longer one; else one interval for both, Kafka Streams' own. */
    public static CommitPace of(Duration freshInterval, Duration backlogInterval, Duration behindAfter) {
        return backlogInterval.compareTo(freshInterval) > 0 ? new CommitPace(freshInterval, backlogInterval, behindAfter) : NONE;
    }

    public boolean paced() {
        return !freshInterval.isZero();
    }

    /**
     * Per stream thread, shared by its tasks: [0] when it last processed a record, [1] when it last committed (wall
     * clock). Under exactly-once v2 a thread commits all its tasks in one transaction, so the pace is the thread's.
     */
    private static final ThreadLocal<long[]> THREAD_CLOCK = ThreadLocal.withInitial(CommitPace::newClock);

    /** A thread's clock before its first record and commit (never committed: long ago, without overflow). */
    static long[] newClock() {
        return new long[] {0, Long.MIN_VALUE / 2};
    }

    /** One task's view: the newest record it processed since its last commit. */
    static final class Task {
        private final CommitPace pace;
        private long newest = Long.MIN_VALUE;
        /** When this task was last part of a commit (wall clock). */
        private long lastCommit = Long.MIN_VALUE / 2;
        /** Its thread's clock; a task runs on the thread that initialised it (read once there, not per record). */
        private long[] thread = newClock();
        private ProcessorContext<?, ?> context;
        private Cancellable punctuation;

        Task(CommitPace pace) {
            this.pace = pace;
        }

        /** As a task on the thread whose clock {@code thread} is (what install finds). */
        Task(CommitPace pace, long[] thread) {
            this.pace = pace;
            this.thread = thread;
        }

        /** Asks for a commit at the fresh interval while this task keeps up. Call from the processor's init. */
        void install(ProcessorContext<?, ?> context) {
            newest = Long.MIN_VALUE;
            punctuation = null;
            if (!pace.paced()) return;
            this.context = context;
            thread = THREAD_CLOCK.get();
        }

        /**
         * A record was processed at {@code nowMs}: the wall clock itself, not the processor context's system time, which
         * Kafka Streams sets once per processing iteration; at many rules on a busy machine one iteration outlasts a
         * fresh interval, and the thread then looked idle to every punctuation after it.
         */
        void processed(long recordTimestamp, long nowMs) {
            if (recordTimestamp > newest) newest = recordTimestamp;
            thread[0] = nowMs;
            if (context == null) return;
            // A fresh record a fresh interval or more after the thread's last commit goes at the end of this iteration:
            // waiting for a punctuation would add up to a whole interval to every sparse event's freshness, at each of
            // the two stages.
            if (commitsAtOnce(nowMs)) {
                context.commit();
            } else if (punctuation == null) {
                // Punctuated only while something waits for a commit: every punctuation marks the task as needing one,
                // and a punctuator left running would make an idle pipeline commit (an empty transaction) every interval.
                schedule(untilDue(nowMs));
            }
        }

        private void schedule(long delayMs) {
            punctuation = context.schedule(Duration.ofMillis(delayMs), PunctuationType.WALL_CLOCK_TIME, this::punctuate);
        }

        /** Once per schedule: a commit, or (behind, the thread busy) a look again a fresh interval later. */
        private void punctuate(long nowMs) {
            punctuation.cancel();
            punctuation = null;
            if (wantsCommit(nowMs)) context.commit();
            else if (newest != Long.MIN_VALUE) schedule(pace.freshInterval.toMillis());
        }

        /** At the start of a commit, at {@code nowMs}. */
        void committed(long nowMs) {
            newest = Long.MIN_VALUE;
            lastCommit = nowMs;
            thread[1] = nowMs;
            if (punctuation != null) {
                punctuation.cancel();
                punctuation = null;
            }
        }

        /**
         * The record just processed keeps up, and either the thread last committed a fresh interval ago or more, or this
         * task was not part of a commit for that long and the thread's last one is a quarter interval old. The second is
         * stage 5 behind stage 3 on the same thread: stage 3's commit makes a sparse event readable to stage 5 just after
         * the thread committed, and it would otherwise wait out a whole interval there. A quarter interval between
         * commits bounds a thread at four times the fresh pace, however many tasks take sparse records.
         */
        boolean commitsAtOnce(long nowMs) {
            return keepsUp(nowMs) && nowMs >= due();
        }

        /** Until {@link #commitsAtOnce} would say yes for a record that keeps up (at least 1 ms, at most a fresh interval). */
        long untilDue(long nowMs) {
            return Math.max(1, Math.min(pace.freshInterval.toMillis(), due() - nowMs));
        }

        private long due() {
            long fresh = pace.freshInterval.toMillis();
            return Math.min(thread[1] + fresh, Math.max(lastCommit + fresh, thread[1] + fresh / 4));
        }

        /** Something to commit, and either it keeps up or its thread took no record for a fresh interval. */
        boolean wantsCommit(long nowMs) {
            if (newest == Long.MIN_VALUE) return false;
            return keepsUp(nowMs) || nowMs - thread[0] >= pace.freshInterval.toMillis();
        }

        private boolean keepsUp(long nowMs) {
            return newest != Long.MIN_VALUE && nowMs - newest <= pace.behindAfter.toMillis();
        }
    }
}
