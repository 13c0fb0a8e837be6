package io.tally.ingest.topology;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * A backfill's first node: passes the records of each input partition before the offset the backfill reads to, and
 * paces them. A record at or past its partition's end, or of a partition the end does not name (a topic a pattern
 * matched later), is dropped: it is the live run's alone.
 */
public final class HistoryBound implements Processor<byte[], byte[], byte[], byte[]> {
    private final End end;
    private ProcessorContext<byte[], byte[]> context;

    HistoryBound(End end) {
        this.end = end;
    }

    /**
     * Where a backfill stops, per input partition (exclusive), how fast it may read, and what it has done; shared by
     * every task of the backfill.
     */
    public static final class End {
        private final Map<TopicPartition, Long> offsets;
        private volatile double recordsPerSecond;
        private final AtomicLong passed = new AtomicLong();
        private final AtomicLong deltas = new AtomicLong();
        private long nextAtNanos = System.nanoTime();

        /** @param recordsPerSecond 0 for no limit */
        public End(Map<TopicPartition, Long> offsets, double recordsPerSecond) {
            this.offsets = Map.copyOf(offsets);
            this.recordsPerSecond = recordsPerSecond;
        }

        public Map<TopicPartition, Long> offsets() {
            return offsets;
        }

        /** Reads at {@code recordsPerSecond} from now on (0: no limit). Any thread. */
        public void rate(double recordsPerSecond) {
            this.recordsPerSecond = recordsPerSecond;
        }

        /** Records read before the end so far, in this process. */
        public long passed() {
            return passed.get();
        }

        /** Grade-bucket deltas sent to stage 5 so far, in this process (combined per commit, as live). */
        public long deltas() {
            return deltas.get();
        }

        void sent(int n) {
            deltas.addAndGet(n);
        }

        boolean before(String topic, int partition, long offset) {
            Long e = offsets.get(new TopicPartition(topic, partition));
            return e != null && offset < e;
        }

        /**
         * Waits for this record's turn. One schedule for every task: the rate is the backfill's, whatever the partitions.
         * Why pace at all: the backfill's deltas share stage 5, the sink and its request units with the live run's, and
         * a live update waits behind whatever reached its partition first.
         */
        void pace() throws InterruptedException {
            passed.incrementAndGet();
            double rate = recordsPerSecond;
            if (rate <= 0) return;
            long wait;
            synchronized (this) {
                long now = System.nanoTime();
                nextAtNanos = Math.max(nextAtNanos, now - 1_000_000_000L) + (long) (1e9 / rate);
                wait = nextAtNanos - now;
            }
            if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
        this.context = context;
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        var m = context.recordMetadata().orElseThrow();
        if (!end.before(m.topic(), m.partition(), m.offset())) return;
        try {
            end.pace();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new org.apache.kafka.streams.errors.StreamsException("interrupted while pacing the backfill", e);
        }
        context.forward(record);
    }
}
