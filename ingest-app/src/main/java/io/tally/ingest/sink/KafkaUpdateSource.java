package io.tally.ingest.sink;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link UpdateSource} over a plain {@link KafkaConsumer}: read_committed, no auto commit, values as
 * bytes (decoding happens in the {@link Coalescer}, so a poison record is dead-lettered rather than
 * failing {@code poll}).
 *
 * <p>Chosen over reactor-kafka's KafkaReceiver because the rebalance contract needs the consumer on
 * its own thread inside {@code onPartitionsRevoked}: wait for in-flight writes, then commitSync the
 * durable prefix before the partition moves. reactor-kafka (discontinued, and partly broken on
 * kafka-clients 4.x) commits only offsets acknowledged through its own ReceiverOffset objects, at its
 * own time, and gives its revoke listener no consumer. Backpressure is pause/resume here.
 */
public final class KafkaUpdateSource implements UpdateSource {
    private static final Logger log = LoggerFactory.getLogger(KafkaUpdateSource.class);
    private final KafkaConsumer<String, byte[]> consumer;
    private boolean paused;
    private String topic;
    private RebalanceListener listener;
    private int owned = -1;

    public KafkaUpdateSource(KafkaConsumer<String, byte[]> consumer) {
        this.consumer = consumer;
    }

    @Override
    public void subscribe(String topic, RebalanceListener listener) {
        this.topic = topic;
        this.listener = listener;
        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) listener.revoked(partitions);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                if (paused) consumer.pause(partitions); // new partitions join the current backpressure state
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) listener.lost(partitions);
            }
        });
    }

    @Override
    public ConsumerRecords<String, byte[]> poll(Duration timeout) {
        ConsumerRecords<String, byte[]> records = consumer.poll(timeout);
        int now = consumer.assignment().size();
        if (now != owned && listener != null) { // after the rebalance's callbacks, once the assignment settled
            int total;
            try {
                total = consumer.partitionsFor(topic).size(); // cached metadata, unless the topic changed
            } catch (WakeupException | InterruptException e) {
                throw e;
            } catch (KafkaException e) { // metadata not reachable now: the next poll asks again
                log.warn("partitions of {} unknown for now ({}); the sink's share of a fleet budget is unchanged", topic, e.toString());
                return records;
            }
            owned = now;
            listener.owning(now, total);
        }
        return records;
    }

    @Override
    public void pauseAll(boolean pause) {
        if (pause) consumer.pause(consumer.assignment());
        else if (paused) consumer.resume(consumer.paused());
        paused = pause;
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> mine = new HashMap<>();
        offsets.forEach((tp, o) -> { if (assigned.contains(tp)) mine.put(tp, o); });
        if (!mine.isEmpty()) consumer.commitSync(mine);
        return mine;
    }

    @Override
    public long lag() {
        for (Map.Entry<MetricName, ? extends Metric> e : consumer.metrics().entrySet()) {
            if (e.getKey().name().equals("records-lag-max") && e.getKey().group().equals("consumer-fetch-manager-metrics")
                    && !e.getKey().tags().containsKey("partition") && !e.getKey().tags().containsKey("topic")) {
                Object v = e.getValue().metricValue();
                return v instanceof Double d && !d.isNaN() ? d.longValue() : -1;
            }
        }
        return -1;
    }

    @Override
    public void wakeup() {
        consumer.wakeup();
    }

    @Override
    public void close() {
        consumer.close();
    }
}
