package io.tally.ingest.topology;

import io.tally.model.EntityBucket;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Places every bucket of one Cosmos logical partition ({@code pk}) in one Kafka partition, hashing
 * the pk as Kafka's default partitioner hashes a key. So one task owns all buckets of an entity, and
 * the sink sees all updates of a logical partition in one place and in order, ready to batch. The
 * repartition topic (keyed by pk) and {@code bucket-updates} (keyed by {@code pk|id}) use the same hash,
 * so a bucket's task and its output partition agree.
 */
final class PartitionKeyPartitioner implements StreamPartitioner<String, EntityBucket> {
    @Override
    public Optional<Set<Integer>> partitions(String topic, String key, EntityBucket value, int numPartitions) {
        return partition(value != null ? value.pk() : key, numPartitions);
    }

    StreamPartitioner<String, EntityDeltas> forDeltas() {
        return (topic, key, value, numPartitions) -> partition(value != null ? value.pk() : key, numPartitions);
    }

    private static Optional<Set<Integer>> partition(String pk, int numPartitions) {
        return Optional.of(Set.of(Utils.toPositive(Utils.murmur2(pk.getBytes(StandardCharsets.UTF_8))) % numPartitions));
    }
}
