package io.tally.ingest.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.topology.EntityBucketFixtures;
import io.tally.ingest.source.SourceReader;
import io.tally.ingest.topology.EventIntake;
import io.tally.ingest.topology.TopologyHarness;
import io.tally.rules.source.RuleFields;
import io.tally.ingest.topology.EventValidator;
import io.tally.ingest.topology.FanOut;
import io.tally.ingest.topology.TallyTopology;
import io.tally.ingest.topology.TopologyHarness;
import io.tally.ingest.topology.TopologySettings;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketLayout;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.schemas.DeadLetters;
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
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;
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
    static final Deserializer<Object> PLAIN_AVRO = TopologyHarness.PLAIN_AVRO;

    record Input(long timestamp, byte[] value) {}

    @Test
    void bucketsInsideTheRangeEqualTheLiveTopologysAndNoOthersAreProduced() {
        List<Input> inputs = mixedInputs(new Random(7), 3000, 0);
        ReplayRange range = new ReplayRange(NOW.minus(Duration.ofHours(8)), NOW.minus(Duration.ofHours(2)));
        ReplayAggregator replay = replayEqualsLive(inputs, range);
        assertThat(replay.buckets()).hasSizeGreaterThan(100);
        assertThat(replay.skippedAtBounds()).as("day buckets reach beyond a 6-hour range").isPositive();
        assertThat(replay.duplicates()).isPositive();
        assertThat(replay.rejected()).containsKeys(DeadLetters.Reason.LATE, DeadLetters.Reason.FUTURE,
                DeadLetters.Reason.INVALID, DeadLetters.Reason.DECODE_FAILED, DeadLetters.Reason.EMPTY_VALUE);
        assertThat(replay.read()).isEqualTo(inputs.size());
    }

    @Test
    void aSpilledRuleIsRebuiltIntoTheMainDocumentAndPagesTheLiveRunWrote() {
        ReplayRange wholeDay = new ReplayRange(Instant.parse("2026-02-28T00:00:00Z"), Instant.parse("2026-03-01T00:00:00Z"));
        ReplayAggregator replay = replayEqualsLive(mixedInputs(new Random(11), 3000, 40), wholeDay);
        List<EntityBucket> hot = replay.buckets().stream().filter(d -> d.pk().equals("shop|c-hot")).toList();
        EntityBucket day = hot.stream().filter(d -> d.id().equals(EntityBucketId.main(TimeUnit.DAY, TimeUnit.DAY.bucketIndex(wholeDay.from()))))
                .findFirst().orElseThrow();
        assertThat(day.spilledPages("spend-per-customer-sku")).isEqualTo(EntityBucketLayout.SPILL_PAGES);
        assertThat(hot).filteredOn(EntityBucket::isPage).hasSize(EntityBucketLayout.SPILL_PAGES);
        assertThat(replay.buckets()).as("other customers' SKUs stay inline")
                .anyMatch(d -> !d.isPage() && d.qualifierValues("spend-per-customer-sku") > 0);
    }

    /**
     * Replays {@code inputs} over {@code range} and checks it against the live topology's newest output: exactly the
     * documents wholly inside the range, each with the live bytes (updatedAt aside), {@code ver} included.
     */
    private static ReplayAggregator replayEqualsLive(List<Input> inputs, ReplayRange range) {
        GradeRules rules = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
        ReplayAggregator replay = aggregator(rules, RuleSelection.of(rules, Set.of()), range);
        long offset = 0;
        for (Input in : inputs) replay.accept(record(offset++, in));

        List<EntityBucket> expected = live(rules, inputs).values().stream().filter(d -> {
            EntityBucketId id = EntityBucketId.parse(d.id());
            return range.containsBucket(id.unit(), id.bucketIndex());
        }).toList();
        assertThat(expected).isNotEmpty();
        assertThat(EntityBucketFixtures.json(replay.buckets())).isEqualTo(EntityBucketFixtures.json(expected));
        EntityBucketFixtures.assertVersCountEvents(replay.buckets());
        return replay;
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
        ReplayAggregator replay = aggregator(rules, RuleSelection.of(rules, Set.of()), range);
        long offset = 0;
        for (Input in : inputs) replay.accept(record(offset++, in));
        Map<String, EntityBucket> live = live(rules, inputs);
        String hour = "shop|c-1|" + EntityBucketId.main(TimeUnit.HOUR, TimeUnit.HOUR.bucketIndex(t));
        EntityBucket replayed = replay.buckets().stream().filter(d -> BucketKey.updateKey(d.pk(), d.id()).equals(hour)).findFirst().orElseThrow();
        assertThat(replayed.grade("spend-per-customer", null).orElseThrow().count()).isEqualTo(2);
        assertThat(EntityBucketFixtures.json(List.of(replayed))).isEqualTo(EntityBucketFixtures.json(List.of(live.get(hour))));
        assertThat(replay.duplicates()).isEqualTo(1);
    }

    private static TransactionEvent approvedEvent(Instant t) {
        return TransactionEvent.newBuilder().setTransactionId("tx-once").setEventTime(t).setDomain("shop").setCustomerId("c-1")
                .setEmail(null).setPostalCode(null).setSku("sku-1").setMerchant("m-1").setChannel("WEB")
                .setAmount(new BigDecimal("12.5000")).setCurrency("USD").setStatus("APPROVED").setAttributes(Map.of()).build();
    }

    @Test
    void aSelectionKeepsWholeEntityBucketsThatHoldOneOfItsRulesWithTheirPages() {
        GradeRules rules = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
        ReplayRange range = new ReplayRange(NOW.minus(Duration.ofDays(2)), NOW.minus(Duration.ofHours(1)));
        List<Input> inputs = mixedInputs(new Random(3), 1500, 40);
        ReplayAggregator all = aggregator(rules, RuleSelection.of(rules, Set.of()), range);
        ReplayAggregator sku = aggregator(rules, RuleSelection.of(rules, Set.of("spend-per-customer-sku")), range);
        ReplayAggregator email = aggregator(rules, RuleSelection.of(rules, Set.of("orders-per-email")), range);
        long offset = 0;
        for (Input in : inputs) {
            ConsumerRecord<byte[], byte[]> r = record(offset++, in);
            all.accept(r);
            sku.accept(r);
            email.accept(r);
        }

        Set<String> holdingSku = all.buckets().stream().filter(d -> !d.isPage() && (d.qualifierValues("spend-per-customer-sku") > 0
                || d.spilledPages("spend-per-customer-sku") > 0)).map(d -> d.pk() + "|" + d.id()).collect(Collectors.toSet());
        List<EntityBucket> expected = all.buckets().stream().filter(d -> {
            EntityBucketId id = EntityBucketId.parse(d.id());
            return holdingSku.contains(d.pk() + "|" + EntityBucketId.main(id.unit(), id.bucketIndex()));
        }).toList();
        assertThat(expected).as("pages of the hot customer's spilled SKUs").anyMatch(EntityBucket::isPage);
        assertThat(expected).as("rebuilt whole: the customer's spend beside its SKUs")
                .anyMatch(d -> d.grades().containsKey("spend-per-customer"));
        assertThat(EntityBucketFixtures.json(sku.buckets())).isEqualTo(EntityBucketFixtures.json(expected));

        assertThat(email.buckets()).isNotEmpty().allMatch(d -> d.grades().keySet().equals(Set.of("orders-per-email")));
    }

    private static ReplayAggregator aggregator(GradeRules rules, RuleSelection selection, ReplayRange range) {
        RuleFields fields = RuleFields.of(rules);
        return new ReplayAggregator(new EventIntake(new SourceReader(TopologyHarness.SOURCES, fields, PLAIN_AVRO),
                EventValidator.of(SETTINGS, fields, TopologyHarness.SOURCES.sources())), new FanOut(rules, fields), selection, range,
                SETTINGS.dedupeHorizon(), 0);
    }

    /** The live topology's newest output per key {@code pk|id} after the inputs, which is also what its store holds. */
    private static Map<String, EntityBucket> live(GradeRules rules, List<Input> inputs) {
        try (TopologyHarness live = new TopologyHarness(rules, SETTINGS, PLAIN_AVRO, NOW)) {
            for (Input in : inputs) live.input.pipeInput("k", in.value(), Instant.ofEpochMilli(in.timestamp()));
            Map<String, EntityBucket> out = new HashMap<>();
            live.updates.readRecordsToList().forEach(r -> out.put(r.key(), r.value()));
            assertThat(EntityBucketFixtures.json(out.values())).isEqualTo(EntityBucketFixtures.json(live.stored().values()));
            return out;
        }
    }

    /**
     * Record timestamps move forward by up to a minute from NOW - 12 h; events are mostly up to 10 h older
     * than their record, some late, future, invalid, empty, undecodable, or repeats of an earlier event. {@code hotPercent}
     * of the new events are of one hot customer, {@code c-hot}, buying from a thousand SKUs.
     */
    static List<Input> mixedInputs(Random rnd, int n, int hotPercent) {
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
            boolean hot = hotPercent > 0 && rnd.nextInt(100) < hotPercent;
            TransactionEvent e = TransactionEvent.newBuilder().setTransactionId("tx-" + i).setEventTime(t).setDomain("shop")
                    .setCustomerId(kind == 12 ? "" : hot ? "c-hot" : "c-" + rnd.nextInt(20)).setEmail(rnd.nextInt(10) == 0 ? null : "c@example.com")
                    .setPostalCode("pc-" + rnd.nextInt(5)).setSku(hot ? "sku-h" + rnd.nextInt(1000) : "sku-" + rnd.nextInt(8)).setMerchant("m-1").setChannel("WEB")
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

    static byte[] avro(TransactionEvent e) {
        return TopologyHarness.avro(e);
    }
}
