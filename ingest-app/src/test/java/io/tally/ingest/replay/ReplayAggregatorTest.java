package io.tally.ingest.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.rules.GradeRules;
import io.tally.schemas.DeadLetters;
import io.tally.ingest.topology.EventIntake;
import io.tally.ingest.topology.EventValidator;
import io.tally.ingest.topology.FanOut;
import io.tally.ingest.topology.TallyTopology;
import io.tally.ingest.topology.TopologySettings;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.TransactionEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;

/**
 * The replay's stages 1-5 against the live topology ({@link TallyTopology#build} in a TopologyTestDriver) on
 * the same records: every bucket wholly inside the range has the live value and {@code ver}, and no other
 * bucket is produced. The records mix duplicates, late, future, invalid and undecodable ones, out of order.
 */
class ReplayAggregatorTest {
    static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    static final TopologySettings SETTINGS = new TopologySettings(Duration.ofDays(7), Duration.ofMinutes(5),
            Duration.ofDays(35), new BigDecimal("1000000"));
    /** Avro single-object encoding: the registry is the serde's concern, tested elsewhere. */
    static final Deserializer<TransactionEvent> PLAIN_AVRO = (topic, bytes) -> {
        try {
            return TransactionEvent.fromByteBuffer(ByteBuffer.wrap(bytes));
        } catch (IOException | RuntimeException e) {
            throw new org.apache.kafka.common.errors.SerializationException("not a TransactionEvent: " + e, e);
        }
    };

    record Input(long timestamp, byte[] value) {}

    @Test
    void bucketsInsideTheRangeEqualTheLiveTopologysAndNoOthersAreProduced() {
        GradeRules rules = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
        List<Input> inputs = mixedInputs(new Random(7), 3000);
        ReplayRange range = new ReplayRange(NOW.minus(Duration.ofHours(8)), NOW.minus(Duration.ofHours(2)));

        Map<String, BucketDocument> live = live(rules, inputs);
        ReplayAggregator replay = aggregator(rules, RuleSelection.of(rules, java.util.Set.of()), range);
        long offset = 0;
        for (Input in : inputs) replay.accept(record(offset++, in));

        Map<String, BucketDocument> expected = new HashMap<>();
        live.forEach((key, doc) -> {
            String[] id = doc.id().split("\\|");
            if (range.containsBucket(TimeUnit.fromCode(id[1]), Long.parseLong(id[2]))) expected.put(key, doc);
        });
        assertThat(expected).hasSizeGreaterThan(100);
        assertThat(replay.buckets().keySet()).isEqualTo(expected.keySet());
        expected.forEach((key, doc) -> assertThat(show(replay.buckets().get(key))).as(key).isEqualTo(show(doc)));
        assertThat(replay.skippedAtBounds()).as("day buckets reach beyond a 6-hour range").isPositive();
        assertThat(replay.duplicates()).isPositive();
        assertThat(replay.rejected()).containsKeys(DeadLetters.Reason.LATE, DeadLetters.Reason.FUTURE,
                DeadLetters.Reason.INVALID, DeadLetters.Reason.DECODE_FAILED, DeadLetters.Reason.EMPTY_VALUE);
        assertThat(replay.read()).isEqualTo(inputs.size());
    }

    @Test
    void aDuplicateAfterTheDedupeHorizonCountsAgainAsInTheLiveRun() {
        GradeRules rules = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
        Instant t = NOW.minus(Duration.ofDays(20));
        byte[] e = avro(approvedEvent(t));
        long first = t.toEpochMilli();
        List<Input> inputs = List.of(new Input(first, e), new Input(first + Duration.ofDays(1).toMillis(), e),
                new Input(first + Duration.ofDays(8).toMillis(), e)); // within the 7-day horizon, then beyond it
        ReplayRange range = new ReplayRange(t.minus(Duration.ofDays(1)), t.plus(Duration.ofDays(1)));
        ReplayAggregator replay = aggregator(rules, RuleSelection.of(rules, java.util.Set.of()), range);
        long offset = 0;
        for (Input in : inputs) replay.accept(record(offset++, in));
        Map<String, BucketDocument> live = live(rules, inputs);
        String hour = "shop|c-1|spend-per-customer|hour|" + TimeUnit.HOUR.bucketIndex(t);
        assertThat(replay.buckets().get(hour).count()).isEqualTo(2);
        assertThat(show(replay.buckets().get(hour))).isEqualTo(show(live.get(hour)));
        assertThat(replay.duplicates()).isEqualTo(1);
    }

    private static TransactionEvent approvedEvent(Instant t) {
        return TransactionEvent.newBuilder().setTransactionId("tx-once").setEventTime(t).setDomain("shop").setCustomerId("c-1")
                .setEmail(null).setPostalCode(null).setSku("sku-1").setMerchant("m-1").setChannel("WEB")
                .setAmount(new BigDecimal("12.5000")).setCurrency("USD").setStatus("APPROVED").setAttributes(Map.of()).build();
    }

    @Test
    void onlyTheSelectedRulesAreRebuilt() {
        GradeRules rules = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
        ReplayRange range = new ReplayRange(NOW.minus(Duration.ofDays(2)), NOW.minus(Duration.ofHours(1)));
        ReplayAggregator replay = aggregator(rules, RuleSelection.of(rules, java.util.Set.of("orders-per-email")), range);
        long offset = 0;
        for (Input in : mixedInputs(new Random(3), 500)) replay.accept(record(offset++, in));
        assertThat(replay.buckets()).isNotEmpty();
        assertThat(replay.buckets().values()).allMatch(d -> d.grade().equals("orders-per-email"));
    }

    private static ReplayAggregator aggregator(GradeRules rules, RuleSelection selection, ReplayRange range) {
        return new ReplayAggregator(new EventIntake(PLAIN_AVRO, EventValidator.of(SETTINGS, rules)), new FanOut(rules), selection, range, SETTINGS.dedupeHorizon());
    }

    /** Every bucket the live topology holds after the inputs, keyed pk|id. */
    private static Map<String, BucketDocument> live(GradeRules rules, List<Input> inputs) {
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, Topics.Names.DEFAULT, SETTINGS, rules, PLAIN_AVRO);
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "replay-equivalence");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        Map<String, BucketDocument> out = new HashMap<>();
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), p, NOW)) {
            TestInputTopic<String, byte[]> topic = driver.createInputTopic(Topics.TRANSACTIONS, Serdes.String().serializer(),
                    Serdes.ByteArray().serializer());
            for (Input in : inputs) topic.pipeInput("k", in.value(), Instant.ofEpochMilli(in.timestamp()));
            KeyValueStore<String, BucketDocument> store = driver.getKeyValueStore(TallyTopology.BUCKET_STORE);
            try (KeyValueIterator<String, BucketDocument> it = store.all()) {
                while (it.hasNext()) {
                    KeyValue<String, BucketDocument> kv = it.next();
                    out.put(kv.key, kv.value);
                }
            }
        }
        return out;
    }

    /**
     * Record timestamps move forward by up to a minute from NOW - 12 h; events are mostly up to 10 h older
     * than their record, some late, future, invalid, empty, undecodable, or repeats of an earlier event.
     */
    static List<Input> mixedInputs(Random rnd, int n) {
        List<Input> out = new ArrayList<>();
        List<TransactionEvent> sent = new ArrayList<>();
        long ts = NOW.minus(Duration.ofHours(12)).toEpochMilli();
        for (int i = 0; i < n; i++) {
            ts += rnd.nextInt(60_000);
            int kind = rnd.nextInt(100);
            if (kind < 8 && !sent.isEmpty()) {
                out.add(new Input(ts, avro(sent.get(sent.size() - 1 - rnd.nextInt(Math.min(50, sent.size()))))));
                continue;
            }
            if (kind == 8) { out.add(new Input(ts, "{\"json\": 1}".getBytes(StandardCharsets.UTF_8))); continue; }
            if (kind == 9) { out.add(new Input(ts, new byte[0])); continue; }
            Instant t = Instant.ofEpochMilli(ts - rnd.nextLong(Duration.ofHours(10).toMillis()));
            if (kind == 10) t = Instant.ofEpochMilli(ts).plus(Duration.ofHours(1));  // FUTURE
            if (kind == 11) t = Instant.ofEpochMilli(ts).minus(Duration.ofDays(40)); // LATE
            TransactionEvent e = TransactionEvent.newBuilder().setTransactionId("tx-" + i).setEventTime(t).setDomain("shop")
                    .setCustomerId(kind == 12 ? "" : "c-" + rnd.nextInt(20)).setEmail(rnd.nextInt(10) == 0 ? null : "c@example.com")
                    .setPostalCode("pc-" + rnd.nextInt(5)).setSku("sku-" + rnd.nextInt(8)).setMerchant("m-1").setChannel("WEB")
                    .setAmount(BigDecimal.valueOf(rnd.nextInt(1_000_000), 2).setScale(4))
                    .setCurrency("USD").setStatus(rnd.nextInt(10) == 0 ? "DECLINED" : "APPROVED").setAttributes(Map.of()).build();
            sent.add(e);
            out.add(new Input(ts, avro(e)));
        }
        return out;
    }

    private static ConsumerRecord<byte[], byte[]> record(long offset, Input in) {
        return new ConsumerRecord<>(Topics.TRANSACTIONS, 0, offset, in.timestamp(), org.apache.kafka.common.record.TimestampType.CREATE_TIME,
                0, in.value().length, new byte[0], in.value(), new org.apache.kafka.common.header.internals.RecordHeaders(),
                java.util.Optional.empty());
    }

    private static String show(BucketDocument d) {
        return d.pk() + " " + d.id() + " sum " + plain(d.sum()) + " count " + d.count() + " min " + plain(d.min()) + " max "
                + plain(d.max()) + " ver " + d.ver() + " ttl " + d.ttl() + " bucket " + d.bucket();
    }

    private static String plain(BigDecimal v) {
        return v == null ? "null" : v.toPlainString();
    }

    static byte[] avro(TransactionEvent e) {
        try {
            ByteBuffer b = e.toByteBuffer();
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
