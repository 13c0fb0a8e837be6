package io.tally.ingest.replay;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Which offsets of each partition a replay reads: from the first record whose timestamp is at or after
 * {@code readFrom} up to the end offset captured when the plan is made (the last stable offset, as the
 * consumer reads committed data only). Records that arrive later are not read, so the job is bounded
 * and its totals are known up front.
 *
 * <p>An accepted event's record timestamp is at least its event time minus the future skew (else it is
 * FUTURE), so reading from {@code from - futureSkew} sees every event of the range. When a partition's
 * earliest retained record is already at or after that instant and earlier records were deleted, the
 * deleted ones may have held events of the range: the plan refuses ({@link RetentionLostException}).
 */
record ReplayPlan(List<PartitionPlan> partitions) {

    /** Offsets {@code [start, end)} of one partition. */
    record PartitionPlan(TopicPartition partition, long start, long end) {
        long records() { return Math.max(0, end - start); }
    }

    /** Part of the range is no longer in the topic. */
    static final class RetentionLostException extends ReplayException {
        RetentionLostException(String message) {
            super(ReplayJob.EXIT_RETENTION_LOST, message);
        }
    }

    long total() {
        return partitions.stream().mapToLong(PartitionPlan::records).sum();
    }

    /** Partition to its plan, for lookups per record. */
    Map<TopicPartition, PartitionPlan> byPartition() {
        Map<TopicPartition, PartitionPlan> out = new HashMap<>();
        partitions.forEach(p -> out.put(p.partition(), p));
        return out;
    }

    /** The plan over every partition of {@code topics} (every source topic of the run). */
    static ReplayPlan capture(Consumer<?, ?> consumer, List<String> topics, Instant from, Instant readFrom, Duration timeout) {
        List<TopicPartition> tps = new ArrayList<>();
        for (String topic : topics) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
            if (infos == null || infos.isEmpty()) {
                throw new ReplayException(ReplayJob.EXIT_FAILED, "topic " + topic + " does not exist (check topics.prefix, "
                        + "ingest.sources.file and kafka.bootstrap.servers)");
            }
            infos.stream().map(i -> new TopicPartition(topic, i.partition()))
                    .sorted(java.util.Comparator.comparingInt(TopicPartition::partition)).forEach(tps::add);
        }
        consumer.assign(tps); // a read_committed consumer tracks the last stable offset of assigned partitions only
        Map<TopicPartition, Long> ends = consumer.endOffsets(tps, timeout);
        Map<TopicPartition, Long> begins = consumer.beginningOffsets(tps, timeout);
        Map<TopicPartition, Long> query = new HashMap<>();
        tps.forEach(tp -> query.put(tp, readFrom.toEpochMilli()));
        Map<TopicPartition, OffsetAndTimestamp> atTime = consumer.offsetsForTimes(query, timeout);

        List<PartitionPlan> plans = new ArrayList<>();
        List<String> lost = new ArrayList<>();
        for (TopicPartition tp : tps) {
            long begin = begins.get(tp), end = ends.get(tp);
            OffsetAndTimestamp first = atTime.get(tp);
            if (begin > 0 && first != null && first.offset() <= begin) {
                lost.add(tp + ": its earliest retained record (offset " + begin + ") has timestamp "
                        + Instant.ofEpochMilli(first.timestamp()) + ", after the requested start " + readFrom);
            } else if (begin > 0 && begin >= end) {
                lost.add(tp + ": retains no records at all (log start offset " + begin + "), so it cannot show that none were in the range");
            }
            long start = first == null ? end : Math.min(end, Math.max(begin, first.offset()));
            plans.add(new PartitionPlan(tp, start, end));
        }
        if (!lost.isEmpty()) {
            throw new RetentionLostException("the topic no longer retains the start of the range: events from --from " + from
                    + " on may be in records with timestamps from " + readFrom + " (--from minus ingest.max-future-skew.ms), but\n  - "
                    + String.join("\n  - ", lost) + "\nEarlier records were deleted (retention or deleteRecords). Choose a --from "
                    + "at or after the earliest retained time, or rebuild the range from a recording kept outside Kafka "
                    + "(loadgen --loadgen.mode=replay, see docs/replay.md).");
        }
        return new ReplayPlan(List.copyOf(plans));
    }
}
