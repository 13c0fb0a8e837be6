package io.tally.ingest.sink;

import io.tally.schemas.DeadLetters;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import reactor.core.publisher.Mono;

/**
 * Puts a write Cosmos refused for good, or an update that does not decode, on the DLQ topic: the original key and
 * value, and the headers of {@link DeadLetters} (reason {@code COSMOS_REFUSED} with the Cosmos status, or
 * {@code DECODE_FAILED}; message; source topic, partition and offset; time). The write counts as done only once
 * the broker acknowledged it.
 */
public interface DeadLetterPublisher extends AutoCloseable {

    Mono<Void> publish(BucketWrite write, DeadLetter letter);

    @Override
    default void close() {}

    /** A Kafka producer (idempotent, acks=all) to {@code topic}. */
    static DeadLetterPublisher kafka(Map<String, Object> producerConfig, String topic) {
        Map<String, Object> c = new java.util.HashMap<>(producerConfig);
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        KafkaProducer<String, byte[]> producer = new KafkaProducer<>(c, new StringSerializer(), new ByteArraySerializer());
        return new DeadLetterPublisher() {
            @Override
            public Mono<Void> publish(BucketWrite w, DeadLetter letter) {
                return Mono.create(sink -> {
                    ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, w.key, w.raw);
                    DeadLetters.describe(r.headers(), letter.reason(), letter.message(),
                            new DeadLetters.Source(w.partition.topic(), w.partition.partition(), w.offset), Instant.now());
                    if (letter.reason() == DeadLetters.Reason.COSMOS_REFUSED) {
                        DeadLetters.cosmosStatus(r.headers(), letter.status(), letter.subStatus());
                    }
                    producer.send(r, (md, e) -> {
                        if (e != null) sink.error(e);
                        else sink.success();
                    });
                });
            }

            @Override
            public void close() {
                producer.close(java.time.Duration.ofSeconds(5));
            }
        };
    }
}
