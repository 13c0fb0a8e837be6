package io.tally.ingest.sink;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Where bucket updates come from: the small surface the sink needs from Kafka, so the consumer behind
 * it can change (a plain {@code KafkaConsumer} loop today, {@link KafkaUpdateSource}; a reactor-kafka
 * {@code KafkaReceiver} would implement the same five calls).
 *
 * <p>Thread contract: every method but {@link #wakeup()} is called from the one poll thread; the
 * listener runs on that thread too, inside {@link #poll}.
 */
public interface UpdateSource extends AutoCloseable {

    /** Rebalance callbacks, on the poll thread, before the partitions change hands. */
    interface RebalanceListener {
        /** Orderly revocation: finish or abandon the partitions' work, commit what is durable. */
        void revoked(Collection<TopicPartition> partitions);

        /** The partitions are already someone else's: abandon their work, commit nothing. */
        void lost(Collection<TopicPartition> partitions);

        /** This instance now owns {@code owned} of the topic's {@code total} partitions (after a rebalance, on the poll thread). */
        default void owning(int owned, int total) {}
    }

    void subscribe(String topic, RebalanceListener listener);

    ConsumerRecords<String, byte[]> poll(Duration timeout);

    /** Stops (true) or restarts (false) fetching from every assigned partition; membership is kept. */
    void pauseAll(boolean paused);

    /** Commits synchronously; offsets of partitions no longer assigned are skipped. Returns what was committed. */
    Map<TopicPartition, OffsetAndMetadata> commit(Map<TopicPartition, OffsetAndMetadata> offsets);

    /** The largest lag over the assigned partitions, records (-1 when unknown). */
    long lag();

    /** Makes a blocked {@link #poll} return; any thread. */
    void wakeup();

    @Override
    void close();
}
