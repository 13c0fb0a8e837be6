package io.tally.benchmarks;

import io.tally.model.Aggregate;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import io.tally.testsupport.kafka.TestKafka;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The grade updates (one (event, grade, unit) applied) a run's output holds: the counts of every grade bucket of the
 * newest version of every document on {@code bucket-updates}, summed. Each grade bucket lives in one document at a
 * time, so the sum counts each update once, whatever the layout moved where. The unit the end-to-end benchmark states
 * CPU in, so the aggregation's figures can be set beside it.
 */
final class GradeUpdateCount {
    private GradeUpdateCount() {}

    static long of(TestKafka kafka, String topic) {
        // Two passes, so only the newest version of each document is decoded and nothing but a ver per key is held.
        Map<String, Long> newest = new HashMap<>();
        each(kafka, topic, r -> newest.merge(r.key(), EntityBucketJson.header(r.value()).ver(), Math::max));
        long[] sum = {0};
        each(kafka, topic, r -> {
            Long ver = newest.get(r.key());
            if (ver == null || EntityBucketJson.header(r.value()).ver() != ver) return;
            newest.remove(r.key());
            sum[0] += counts(EntityBucketJson.decode(r.value()));
        });
        return sum[0];
    }

    private static long counts(EntityBucket d) {
        long n = 0;
        for (Aggregate a : d.grades().values()) n += a.count();
        for (Map<String, Aggregate> values : d.qualified().values()) for (Aggregate a : values.values()) n += a.count();
        for (Map<Integer, Aggregate> byMinute : d.minutes().values()) for (Aggregate a : byMinute.values()) n += a.count();
        return n;
    }

    private static void each(TestKafka kafka, String topic, Consumer<ConsumerRecord<String, byte[]>> action) {
        try (var c = new KafkaConsumer<String, byte[]>(Map.of("bootstrap.servers", kafka.bootstrapServers(),
                "isolation.level", "read_committed", "max.poll.records", 10_000), new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) c.poll(Duration.ofMillis(500)).forEach(action);
        }
    }
}
