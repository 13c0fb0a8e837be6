package io.tally.loadgen;

import io.tally.config.ConfigException;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.kafka.sender.KafkaSender;
import reactor.kafka.sender.SenderOptions;
import reactor.kafka.sender.SenderRecord;

/**
 * Produces deterministic TransactionEvents and reports what it produced: the count acknowledged by
 * the broker and the total spend per customer, which is the ground truth the pipeline must reach.
 */
public final class LoadgenMain {
    private static final Logger log = LoggerFactory.getLogger(LoadgenMain.class);

    /** What was produced and acknowledged. */
    public record Summary(long acknowledged, long failed, Map<String, BigDecimal> spendByCustomer) {}

    public static void main(String[] args) {
        LoadgenSettings settings;
        try {
            settings = LoadgenSettings.load(args, System.getenv());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Instant start = Instant.now().truncatedTo(ChronoUnit.HOURS);
        Summary s = run(settings, start);
        System.out.printf("loadgen: %d events acknowledged, %d failed, event times from %s (hour bucket %d)%n",
                s.acknowledged(), s.failed(), start, start.getEpochSecond() / 3600);
        s.spendByCustomer().forEach((c, v) -> System.out.printf("  %s spent %s%n", c, v.toPlainString()));
        if (s.failed() > 0) {
            System.err.printf("loadgen: %d events were NOT acknowledged by Kafka%n", s.failed());
            System.exit(1);
        }
    }

    public static Summary run(LoadgenSettings settings, Instant start) {
        Map<String, Object> p = new HashMap<>(settings.kafkaOverrides());
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        AvroSerializer<TransactionEvent> values = new AvroSerializer<>(new SchemaRegistryClient(settings.schemaRegistryUrl()));
        values.configure(Map.of(), false);
        SenderOptions<String, TransactionEvent> options = SenderOptions.<String, TransactionEvent>create(p)
                .withKeySerializer(new StringSerializer())
                .withValueSerializer(values)
                .stopOnError(false); // report every failed send instead of stopping at the first

        EventGenerator gen = new EventGenerator(settings, start);
        Map<String, BigDecimal> spend = new TreeMap<>();
        long[] acked = {0}, failed = {0};
        KafkaSender<String, TransactionEvent> sender = KafkaSender.create(options);
        try {
            Flux<SenderRecord<String, TransactionEvent, TransactionEvent>> records = Flux.range(0, settings.events())
                    .map(i -> gen.next())
                    .map(ev -> SenderRecord.create(new ProducerRecord<>(settings.topic(), ev.getCustomerId(), ev), ev));
            sender.send(records).doOnNext(r -> {
                if (r.exception() != null) {
                    failed[0]++;
                    log.error("event {} not acknowledged: {}", r.correlationMetadata().getTransactionId(), r.exception().toString());
                } else {
                    acked[0]++;
                    spend.merge(r.correlationMetadata().getCustomerId(), r.correlationMetadata().getAmount(), BigDecimal::add);
                }
            }).blockLast();
        } finally {
            sender.close();
        }
        return new Summary(acked[0], failed[0], spend);
    }
}
