package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Places every bucket of one Cosmos logical partition ({@code pk}) in one Kafka partition, hashing
 * the pk as Kafka's default partitioner hashes a key. So one task owns all buckets of an entity, and
 * the sink sees all updates of a logical partition in one place and in order, ready to batch.
 */
final class PartitionKeyPartitioner implements StreamPartitioner<String, BucketDocument> {
    @Override
    public Optional<Set<Integer>> partitions(String topic, String key, BucketDocument value, int numPartitions) {
        String pk = value != null ? value.pk() : key;
        return Optional.of(Set.of(Utils.toPositive(Utils.murmur2(pk.getBytes(StandardCharsets.UTF_8))) % numPartitions));
    }
}
