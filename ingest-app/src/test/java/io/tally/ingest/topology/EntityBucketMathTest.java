package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.Aggregate;
import io.tally.model.BucketId;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketJson;
import io.tally.model.EntityBucketLayout;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

class EntityBucketMathTest {
    private static final String PK = "shop|c-hot";
    private static final long HOUR = 475_000;
    private static final long DAY = HOUR / 24;
    private static final int SPEND = EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX;
    private static final BucketStarts STARTS = new BucketStarts();

    private static BigDecimal amount(Random rnd) {
        return BigDecimal.valueOf(rnd.nextInt(10_000_000), 4);
    }

    /**
     * One entity's deltas over two hours of one day: the unqualified {@code spend} in both units, {@code spend-per-sku}
     * with 200 values (it spills) in both, {@code orders-per-merchant} with 10 values (inline) in the day.
     */
    private static List<EntityDeltas.Delta> hotEntityDeltas() {
        Random rnd = new Random(99);
        List<EntityDeltas.Delta> out = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            BigDecimal a = amount(rnd);
            long hour = HOUR + i % 2;
            String sku = "sku|" + (i < 200 ? i : rnd.nextInt(200)) + ":ü";
            out.add(EntityDeltas.Delta.of("spend", null, TimeUnit.HOUR, hour, SPEND, 3_024_000, a));
            out.add(EntityDeltas.Delta.of("spend", null, TimeUnit.DAY, DAY, SPEND, 3_024_000, a));
            out.add(EntityDeltas.Delta.of("spend-per-sku", sku, TimeUnit.HOUR, hour, EntityDeltas.SUM, 3_024_000, a));
            out.add(EntityDeltas.Delta.of("spend-per-sku", sku, TimeUnit.DAY, DAY, EntityDeltas.SUM, 3_024_000, a));
            out.add(EntityDeltas.Delta.of("orders-per-merchant", "m-" + rnd.nextInt(10), TimeUnit.DAY, DAY, EntityDeltas.VALUE_ONE, 604_800, a));
        }
        return out;
    }

    private static Map<String, EntityBucket> apply(Collection<EntityDeltas.Delta> deltas) {
        Map<String, EntityBucket> docs = new TreeMap<>();
        for (EntityDeltas.Delta d : deltas) EntityBucketMath.apply(EntityBucketFixtures.in(docs), PK, d, STARTS, EntityBucketFixtures.TTLS);
        return docs;
    }

    /** Per-grade totals summed straight from the deltas, by {@code pk|viewId}: no Aggregate, no entity bucket. */
    private static Map<String, Aggregate> expected(String pk, Collection<EntityDeltas.Delta> deltas) {
        Map<String, List<EntityDeltas.Delta>> byGrade = deltas.stream().collect(Collectors.groupingBy(
                d -> BucketKey.updateKey(pk, BucketId.format(d.grade(), d.unit(), d.bucketIndex()))));
        Map<String, Aggregate> out = new TreeMap<>();
        byGrade.forEach((key, ds) -> {
            List<BigDecimal> sums = ds.stream().map(EntityDeltas.Delta::sum).filter(v -> v != null).toList();
            List<BigDecimal> mins = ds.stream().map(EntityDeltas.Delta::min).filter(v -> v != null).toList();
            List<BigDecimal> maxs = ds.stream().map(EntityDeltas.Delta::max).filter(v -> v != null).toList();
            out.put(key, new Aggregate(sums.stream().reduce(BigDecimal::add).orElse(null),
                    ds.stream().mapToLong(EntityDeltas.Delta::count).sum(),
                    mins.isEmpty() ? null : Collections.min(mins), maxs.isEmpty() ? null : Collections.max(maxs)));
        });
        return out;
    }

    private static EntityBucket main(Map<String, EntityBucket> docs, TimeUnit unit, long index) {
        return docs.get(BucketKey.updateKey(PK, EntityBucketId.main(unit, index)));
    }

    @Test
    void anyOrderOfTheSameDeltasEndsWithTheSameDocumentsAndVers() {
        List<EntityDeltas.Delta> deltas = hotEntityDeltas();
        Map<String, String> first = null;
        for (int seed = 0; seed < 20; seed++) {
            List<EntityDeltas.Delta> shuffled = new ArrayList<>(deltas);
            Collections.shuffle(shuffled, new Random(seed));
            Map<String, EntityBucket> docs = apply(shuffled);
            Map<String, String> json = EntityBucketFixtures.json(docs.values());
            if (first == null) first = json;
            assertThat(json).as("permutation %d", seed).isEqualTo(first);
        }
        Map<String, EntityBucket> docs = apply(deltas);
        assertThat(main(docs, TimeUnit.DAY, DAY).spilledPages("spend-per-sku")).as("spilled").isEqualTo(EntityBucketLayout.SPILL_PAGES);
        assertThat(main(docs, TimeUnit.DAY, DAY).qualifierValues("orders-per-merchant")).as("inline").isEqualTo(10);
        assertThat(main(docs, TimeUnit.HOUR, HOUR).spilledPages("spend-per-sku")).isEqualTo(EntityBucketLayout.SPILL_PAGES);
    }

    @Test
    void everyGradeIsHeldOnceWithExactlyItsDeltasAndEveryVerCountsItsEvents() {
        List<EntityDeltas.Delta> deltas = hotEntityDeltas();
        Map<String, EntityBucket> docs = apply(deltas);

        assertThat(EntityBucketFixtures.views(docs.values())).isEqualTo(expected(PK, deltas));
        EntityBucketFixtures.assertVersCountEvents(docs.values());
        Map<String, Long> eventsByMain = new HashMap<>();
        deltas.forEach(d -> eventsByMain.merge(BucketKey.updateKey(PK, EntityBucketId.main(d.unit(), d.bucketIndex())), d.count(), Long::sum));
        docs.values().stream().filter(d -> !d.isPage())
                .forEach(d -> assertThat(d.ver()).as("%s", d).isEqualTo(eventsByMain.get(BucketKey.updateKey(d.pk(), d.id()))));
        assertThat(docs.values()).filteredOn(EntityBucket::isPage).hasSize(3 * EntityBucketLayout.SPILL_PAGES).allSatisfy(page -> {
            assertThat(page.grades()).isEmpty();
            assertThat(page.qualified()).containsOnlyKeys(page.rule());
            assertThat(page.qualified().get(page.rule()).keySet()).as("values on the page their hash names")
                    .allMatch(q -> EntityBucketLayout.pageOf(q, EntityBucketLayout.SPILL_PAGES) == page.page());
            assertThat(page.ttl()).isEqualTo(3_024_000);
        });
        assertThat(main(docs, TimeUnit.DAY, DAY).ttl()).as("the longest retention of its grades").isEqualTo(3_024_000);
    }

    /**
     * Minute deltas of one entity over two hours: {@code spend} (35 days) and {@code orders} (one hour) in every minute
     * of the first hour, 2 x 60 = 120 grades, and of the second hour, plus {@code spend-velocity} and {@code declines} in
     * its minutes: 4 x 60 = 240, then more in 20 minutes to pass the bound. A qualified minute rule stays in its minute
     * documents.
     */
    private static List<EntityDeltas.Delta> minuteDeltas() {
        Random rnd = new Random(7);
        List<EntityDeltas.Delta> out = new ArrayList<>();
        long first = HOUR * 60;
        for (int i = 0; i < 600; i++) {
            BigDecimal a = amount(rnd);
            long m = first + rnd.nextInt(60);
            out.add(EntityDeltas.Delta.of("spend", null, TimeUnit.MINUTE, m, SPEND, 3_024_000, a));
            out.add(EntityDeltas.Delta.of("orders", null, TimeUnit.MINUTE, m, EntityDeltas.VALUE_ONE, 3_600, a));
            out.add(EntityDeltas.Delta.of("spend", null, TimeUnit.HOUR, HOUR, SPEND, 3_024_000, a));
            long n = first + 60 + (i < 240 ? i % 60 : rnd.nextInt(60));
            out.add(EntityDeltas.Delta.of("spend", null, TimeUnit.MINUTE, n, SPEND, 3_024_000, a));
            out.add(EntityDeltas.Delta.of("orders", null, TimeUnit.MINUTE, n, EntityDeltas.VALUE_ONE, 3_600, a));
            out.add(EntityDeltas.Delta.of("spend-velocity", null, TimeUnit.MINUTE, n, EntityDeltas.SUM, 3_024_000, a));
            out.add(EntityDeltas.Delta.of(i < 300 ? "declines" : "orders-late", null, TimeUnit.MINUTE, n, EntityDeltas.VALUE_ONE, 3_600, a));
            out.add(EntityDeltas.Delta.of("orders-per-sku", "sku-" + rnd.nextInt(5), TimeUnit.MINUTE, n, EntityDeltas.VALUE_ONE, 3_600, a));
        }
        return out;
    }

    @Test
    void minutesNestInTheirHourUntilTheBoundThenMoveToMinuteDocumentsWhicheverTheOrderOrCombination() {
        List<EntityDeltas.Delta> deltas = minuteDeltas();
        Map<String, EntityBucket> docs = apply(deltas);
        EntityBucket quiet = main(docs, TimeUnit.HOUR, HOUR);
        EntityBucket busy = main(docs, TimeUnit.HOUR, HOUR + 1);
        assertThat(quiet.nestsMinutes()).isTrue();
        assertThat(quiet.minuteGrades()).isEqualTo(120).isLessThanOrEqualTo(EntityBucketLayout.MAX_INLINE_MINUTE_GRADES);
        assertThat(docs.values()).as("no minute document of the quiet hour")
                .noneMatch(d -> d.unit().equals("minute") && EntityBucket.hourOf(EntityBucketId.parse(d.id()).bucketIndex()) == HOUR);
        assertThat(busy.nestsMinutes()).as("past %d minute grades", EntityBucketLayout.MAX_INLINE_MINUTE_GRADES).isFalse();
        EntityBucket minute = main(docs, TimeUnit.MINUTE, (HOUR + 1) * 60 + 3);
        assertThat(minute.grades()).containsOnlyKeys("spend", "orders", "spend-velocity", "declines", "orders-late");
        assertThat(minute.ttl()).as("the longest retention of what it holds").isEqualTo(3_024_000);
        assertThat(new String(EntityBucketJson.write(busy), java.nio.charset.StandardCharsets.UTF_8)).contains("\"minutes\":null");
        assertThat(EntityBucketFixtures.views(docs.values())).isEqualTo(expected(PK, deltas));
        EntityBucketFixtures.assertVersCountEvents(docs.values());

        Map<String, String> json = EntityBucketFixtures.json(docs.values());
        for (int seed = 0; seed < 10; seed++) {
            Random rnd = new Random(seed);
            List<EntityDeltas.Delta> shuffled = new ArrayList<>(deltas);
            Collections.shuffle(shuffled, rnd);
            // and combined at random points, as stage 3 combines a commit interval's deltas of one grade bucket
            Map<String, EntityDeltas.Delta> pending = new java.util.LinkedHashMap<>();
            Map<String, EntityBucket> again = new TreeMap<>();
            for (int i = 0; i < shuffled.size(); i++) {
                EntityDeltas.Delta d = shuffled.get(i);
                pending.merge(BucketId.format(d.grade(), d.unit(), d.bucketIndex()), d, EntityDeltas.Delta::plus);
                if (rnd.nextInt(50) == 0 || i == shuffled.size() - 1) {
                    pending.values().forEach(p -> EntityBucketMath.apply(EntityBucketFixtures.in(again), PK, p, STARTS, EntityBucketFixtures.TTLS));
                    pending.clear();
                }
            }
            assertThat(EntityBucketFixtures.json(again.values())).as("order %d", seed).isEqualTo(json);
        }
    }

    @Test
    void anHourOfBeforeNestingKeepsItsMinutesInMinuteDocuments() {
        Map<String, EntityBucket> docs = new TreeMap<>();
        EntityBucket legacy = EntityBucketJson.read(("{\"pk\":\"" + PK + "\",\"id\":\"hour|" + HOUR + "\",\"unit\":\"hour\","
                + "\"bucket\":\"x\",\"ver\":1,\"ttl\":60,\"grades\":{\"spend\":[1,\"1\"]}}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        docs.put(BucketKey.updateKey(PK, legacy.id()), legacy);
        EntityBucketMath.apply(EntityBucketFixtures.in(docs), PK,
                EntityDeltas.Delta.of("orders", null, TimeUnit.MINUTE, HOUR * 60 + 5, EntityDeltas.VALUE_ONE, 3_600, BigDecimal.ONE), STARTS, EntityBucketFixtures.TTLS);
        assertThat(legacy.nestsMinutes()).isFalse();
        assertThat(legacy.ver()).isEqualTo(2);
        assertThat(main(docs, TimeUnit.MINUTE, HOUR * 60 + 5).grades()).containsOnlyKeys("orders");
    }

    @Test
    void aRuleStaysInlineUpToItsLimitAndTheNextValueSpillsItWhole() {
        List<EntityDeltas.Delta> deltas = new ArrayList<>();
        for (int i = 0; i < EntityBucketLayout.MAX_INLINE_QUALIFIER_VALUES; i++) {
            deltas.add(EntityDeltas.Delta.of("spend-per-sku", "sku-" + i, TimeUnit.DAY, DAY, EntityDeltas.SUM, 60, BigDecimal.ONE));
        }
        deltas.add(deltas.get(0));
        Map<String, EntityBucket> inline = apply(deltas);
        assertThat(inline).hasSize(1);
        assertThat(main(inline, TimeUnit.DAY, DAY).qualifierValues("spend-per-sku")).isEqualTo(EntityBucketLayout.MAX_INLINE_QUALIFIER_VALUES);

        deltas.add(EntityDeltas.Delta.of("spend-per-sku", "one-more", TimeUnit.DAY, DAY, EntityDeltas.SUM, 60, BigDecimal.ONE));
        Map<String, EntityBucket> spilled = apply(deltas);
        EntityBucket main = main(spilled, TimeUnit.DAY, DAY);
        assertThat(main.qualified()).isEmpty();
        assertThat(main.spilled()).containsExactly(Map.entry("spend-per-sku", EntityBucketLayout.SPILL_PAGES));
        assertThat(main.ver()).isEqualTo(EntityBucketLayout.MAX_INLINE_QUALIFIER_VALUES + 2);
        assertThat(EntityBucketFixtures.views(spilled.values())).isEqualTo(expected(PK, deltas));
        EntityBucketFixtures.assertVersCountEvents(spilled.values());
    }

    @Test
    void theMainDocumentStaysSmallWhateverTheNumberOfQualifierValues() {
        Random rnd = new Random(5);
        List<EntityDeltas.Delta> deltas = new ArrayList<>();
        for (int i = 0; i < 8_000; i++) {
            deltas.add(EntityDeltas.Delta.of("spend-per-sku", "a-rather-long-stock-keeping-unit-" + i, TimeUnit.DAY, DAY,
                    EntityDeltas.SUM, 60, amount(rnd)));
            deltas.add(EntityDeltas.Delta.of("spend-per-merchant", "merchant-" + rnd.nextInt(3_000), TimeUnit.DAY, DAY,
                    SPEND, 60, amount(rnd)));
        }
        for (int r = 0; r < 30; r++) {
            deltas.add(EntityDeltas.Delta.of("rule-" + r, null, TimeUnit.DAY, DAY, SPEND, 60, amount(rnd)));
            for (int q = 0; q < EntityBucketLayout.MAX_INLINE_QUALIFIER_VALUES; q++) {
                deltas.add(EntityDeltas.Delta.of("qualified-" + (r % 2), "q-" + q, TimeUnit.DAY, DAY, SPEND, 60, amount(rnd)));
            }
        }
        Map<String, EntityBucket> docs = apply(deltas);
        assertThat(EntityBucketJson.write(main(docs, TimeUnit.DAY, DAY)).length).isLessThan(32 * 1024);
        assertThat(docs.values()).filteredOn(EntityBucket::isPage).hasSize(2 * EntityBucketLayout.SPILL_PAGES)
                .allSatisfy(page -> assertThat(EntityBucketJson.write(page).length).isLessThan(64 * 1024));
        assertThat(EntityBucketFixtures.views(docs.values())).isEqualTo(expected(PK, deltas));
    }

    private static final GradeRules HOT_RULES = GradeRules.parse("""
            rules:
              - {name: spend, entity: customerId, value: amount, aggregations: [sum, count, min, max], units: [hour, day], retention: P35D}
              - {name: spend-per-sku, entity: customerId, qualifier: sku, value: amount, aggregations: [sum, count], units: [day],
                 retention: P35D}
              - {name: orders-per-merchant, entity: customerId, qualifier: merchant, value: one, aggregations: [count],
                 units: [day], retention: P7D}
            """, "test");

    /** The deltas {@link #HOT_RULES} give one event, written out by hand. */
    private static List<EntityDeltas.Delta> deltasOf(TransactionEvent e) {
        Instant t = e.getEventTime();
        long hour = TimeUnit.HOUR.bucketIndex(t), day = TimeUnit.DAY.bucketIndex(t);
        return List.of(EntityDeltas.Delta.of("spend", null, TimeUnit.HOUR, hour, SPEND, 3_024_000, e.getAmount()),
                EntityDeltas.Delta.of("spend", null, TimeUnit.DAY, day, SPEND, 3_024_000, e.getAmount()),
                EntityDeltas.Delta.of("spend-per-sku", e.getSku(), TimeUnit.DAY, day, EntityDeltas.SUM, 3_024_000, e.getAmount()),
                EntityDeltas.Delta.of("orders-per-merchant", e.getMerchant(), TimeUnit.DAY, day, EntityDeltas.VALUE_ONE, 604_800, e.getAmount()));
    }

    @Test
    void aHotEntityThroughTheTopologyEmitsExactlyItsGradesAndEachChangedDocumentOncePerCommit() {
        Instant now = TallyTopologyTest.NOW;
        Random rnd = new Random(17);
        List<EntityDeltas.Delta> deltas = new ArrayList<>();
        Map<String, EntityBucket> newest = new HashMap<>();
        try (TopologyHarness topology = new TopologyHarness(HOT_RULES, TallyTopologyTest.SETTINGS, TopologyHarness.PLAIN_AVRO, now)) {
            Instant start = now.minus(Duration.ofHours(10));
            long day = TimeUnit.DAY.bucketIndex(start);
            String dayKey = BucketKey.updateKey(PK, EntityBucketId.main(TimeUnit.DAY, day));
            for (int i = 0; i < 3_600; i++) {
                Instant t = start.plusSeconds(10L * i);
                TransactionEvent e = TransactionEvent.newBuilder(TallyTopologyTest.event("tx-" + i, "c-hot", t, "0", "sku:" + i % 3_000))
                        .setAmount(amount(rnd)).setMerchant("m|" + rnd.nextInt(10)).build();
                deltas.addAll(deltasOf(e));
                topology.input.pipeInput("c-hot", TopologyHarness.avro(e), now);

                List<TestRecord<String, EntityBucket>> commit = topology.updates.readRecordsToList();
                List<String> keys = commit.stream().map(TestRecord::key).toList();
                assertThat(keys).as("commit %d", i).doesNotHaveDuplicates().contains(dayKey, BucketKey.updateKey(PK,
                        EntityBucketId.main(TimeUnit.HOUR, TimeUnit.HOUR.bucketIndex(t))));
                if (i > EntityBucketLayout.MAX_INLINE_QUALIFIER_VALUES) {
                    assertThat(keys).as("commit %d: the two main documents and the page of its SKU", i).hasSize(3).contains(
                            BucketKey.updateKey(PK, EntityBucketId.page(TimeUnit.DAY, day, "spend-per-sku",
                                    EntityBucketLayout.pageOf(e.getSku(), EntityBucketLayout.SPILL_PAGES))));
                }
                commit.forEach(r -> newest.put(r.key(), r.value()));
            }
            assertThat(EntityBucketFixtures.json(newest.values())).isEqualTo(EntityBucketFixtures.json(topology.stored().values()));
            EntityBucket main = newest.get(dayKey);
            assertThat(main.spilledPages("spend-per-sku")).isEqualTo(EntityBucketLayout.SPILL_PAGES);
            assertThat(EntityBucketJson.write(main).length).isLessThan(32 * 1024);
            assertThat(topology.grade(PK, "spend-per-sku:sku:2999", TimeUnit.DAY, day).count()).isEqualTo(1);
        }
        assertThat(EntityBucketFixtures.views(newest.values())).isEqualTo(expected(PK, deltas));
        assertThat(newest.values().stream().filter(EntityBucket::isPage)
                .mapToInt(p -> p.qualifierValues("spend-per-sku")).sum()).isEqualTo(3_000);
        EntityBucketFixtures.assertVersCountEvents(newest.values());
    }
}
