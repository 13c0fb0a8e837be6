package io.tally.loadgen;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.kafka.sender.KafkaSender;
import reactor.kafka.sender.SenderOptions;
import reactor.kafka.sender.SenderRecord;

/**
 * The one way loadgen writes to Kafka: an idempotent, {@code acks=all} reactor-kafka sender of
 * already-encoded bytes, whose every send result is checked. A failed send never stops the run
 * ({@code stopOnError(false)}): each failure is counted and the first few are logged with their
 * sequence number, so the final report can say exactly how many records Kafka did not acknowledge
 * (KAFKA-15591 loses a batch only now and then; a run must not pass when it does).
 *
 * <p>{@link #send} blocks the calling thread until every record has a result; results are delivered, one
 * at a time, on reactor-kafka's result thread. Not reusable across runs: {@link #close()} after one send.
 */
final class CheckedSender implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CheckedSender.class);
    /** Log this many failures individually; the rest are only counted (a dead broker fails them all). */
    private static final int FAILURES_LOGGED = 10;

    /*
     * Producer tuning: none on purpose; Kafka's defaults (no compression, linger 5 ms, 16 KiB batches) stay.
     * Measured against lz4 + linger 10 ms + 256 KiB batches on the 2-core machine (docs/benchmarks/loadgen.md,
     * ground truth off): one A/B favoured the stock settings (~130k vs ~90k rec/s), the next lz4 (~144k vs
     * ~126k); no consistent gain. The arithmetic: an event is ~90 B of Avro, so 150k rec/s is ~13 MB/s over
     * loopback; bytes are nearly free while the 2 cores are shared with the broker, and lz4 spends CPU on both
     * sides to save bytes. Against a remote cluster, try --kafka.compression.type=lz4 --kafka.linger.ms=10.
     */

    private final KafkaSender<String, byte[]> sender;
    private final LoadgenSettings settings;

    CheckedSender(LoadgenSettings s) {
        Map<String, Object> p = new HashMap<>(s.kafkaOverrides());
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrapServers());
        // Not overridable: duplicates and lost records must only ever be the ones loadgen makes on purpose.
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "tally-loadgen");
        SenderOptions<String, byte[]> options = SenderOptions.<String, byte[]>create(p)
                .withKeySerializer(new StringSerializer())
                .withValueSerializer(new ByteArraySerializer())
                .maxInFlight(s.maxInFlight())
                .stopOnError(false);
        this.sender = KafkaSender.create(options);
        this.settings = s;
    }

    /**
     * Sends every record and waits for all results. {@code onAck} gets each acknowledged record with the
     * record timestamp Kafka stored (ms), on the result thread. Failures are counted into {@code counters}.
     *
     * @return empty when every record got a result; otherwise the error that ended the stream early: the
     *         producer threw from {@code send()} (e.g. the topic does not exist: metadata wait timed out), or
     *         the source failed (registry unreachable while encoding). Results received until then are
     *         counted; records without a result are the caller's to count as not acknowledged.
     */
    Optional<Throwable> send(Flux<OutgoingRecord> records, SendCounters counters, BiConsumer<OutgoingRecord, Long> onAck) {
        Flux<SenderRecord<String, byte[], OutgoingRecord>> out = records.map(r -> {
            counters.sent.incrementAndGet();
            return SenderRecord.create(new ProducerRecord<>(settings.topicOf(r.destination()), r.key(), r.value()), r);
        });
        Throwable[] aborted = {null};
        sender.send(out).doOnNext(result -> {
            OutgoingRecord r = result.correlationMetadata();
            if (result.exception() != null) {
                long n = counters.failed.incrementAndGet();
                if (n <= FAILURES_LOGGED) {
                    log.error("record #{} ({}, key {}) was not acknowledged: {}", r.sequence(), r.kind(), r.key(),
                            result.exception().toString());
                } else if (n == FAILURES_LOGGED + 1) {
                    log.error("more records were not acknowledged; counting them without logging each");
                }
            } else {
                counters.acked.incrementAndGet();
                onAck.accept(r, result.recordMetadata().timestamp());
            }
        }).onErrorResume(e -> {
            // reactor-kafka ends the whole stream when producer.send() throws, whatever stopOnError says.
            log.error("sending stopped early: {}", e.toString());
            aborted[0] = e;
            return Flux.empty();
        }).blockLast();
        return Optional.ofNullable(aborted[0]);
    }

    @Override
    public void close() {
        sender.close();
    }
}
