package io.tally.ingest.sink;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import reactor.core.publisher.Mono;

/**
 * Puts a write Cosmos refused for good on the DLQ topic: the original key and value, and headers
 * {@code tally.reason} (e.g. {@code COSMOS_400/0: <message>} or {@code DECODE_FAILED: ...}),
 * {@code tally.status}, {@code tally.source.topic}, {@code tally.source.partition},
 * {@code tally.source.offset}. The write counts as done only once the broker acknowledged it.
 */
public interface DeadLetterPublisher extends AutoCloseable {
    String REASON = "tally.reason";
    String STATUS = "tally.status";
    String SOURCE_TOPIC = "tally.source.topic";
    String SOURCE_PARTITION = "tally.source.partition";
    String SOURCE_OFFSET = "tally.source.offset";

    Mono<Void> publish(BucketWrite write, int status, String reason);

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
            public Mono<Void> publish(BucketWrite w, int status, String reason) {
                return Mono.create(sink -> {
                    ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, w.key, w.raw);
                    r.headers().add(REASON, bytes(reason)).add(STATUS, bytes(Integer.toString(status)))
                            .add(SOURCE_TOPIC, bytes(w.partition.topic()))
                            .add(SOURCE_PARTITION, bytes(Integer.toString(w.partition.partition())))
                            .add(SOURCE_OFFSET, bytes(Long.toString(w.offset)));
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

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
