package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketJson;
import io.tally.model.TimeUnit;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesState.Backfill;
import io.tally.rules.state.RulesState.Grade;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A rules change as stage 5 meets it: documents of the older generation, read from the store, shed the grades the new
 * generation does not keep (and their spill pages and moved-out minutes), and end as a computation under the new
 * generation would have built them from the deltas of the grades it keeps.
 */
class RulesGenerationMathTest {
    private static final String PK = "shop|c-1";
    private static final long HOUR = 480_000;
    private static final long DAY = HOUR / 24;
    private static final BucketStarts STARTS = new BucketStarts();
    private static final int SPEND = EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX;
    private static final List<String> MINUTE_RULES = List.of("m1", "m2", "m3", "m4", "m5");

    /** Generation 0: spend (hour, day), spend-per-sku (qualified, hour; spills), m1-m5 (count per minute; 300 grades move out). */
    private static List<EntityDeltas.Delta> generationZeroDeltas() {
        Random rnd = new Random(7);
        List<EntityDeltas.Delta> out = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            BigDecimal a = BigDecimal.valueOf(rnd.nextInt(1_000_000), 2);
            out.add(EntityDeltas.Delta.of("spend", null, TimeUnit.HOUR, HOUR, SPEND, 3_024_000, a));
            out.add(EntityDeltas.Delta.of("spend", null, TimeUnit.DAY, DAY, SPEND, 3_024_000, a));
            out.add(EntityDeltas.Delta.of("spend-per-sku", "sku-" + (i % 100), TimeUnit.HOUR, HOUR, EntityDeltas.SUM, 3_024_000, a));
            String rule = MINUTE_RULES.get(i % MINUTE_RULES.size());
            out.add(EntityDeltas.Delta.of(rule, null, TimeUnit.MINUTE, HOUR * 60 + (i / 5) % 60, EntityDeltas.VALUE_ONE, 86_400, a));
        }
        return out;
    }

    /** Generation 1 keeps spend and m1-m3 (from 0), counts a new version of spend-per-sku (from 1), and removes m4, m5. */
    private static final CountedGrades GENERATION_ONE = counted(1, List.of(
            grade("spend", TimeUnit.HOUR, 0), grade("spend", TimeUnit.DAY, 0), grade("spend-per-sku", TimeUnit.HOUR, 1),
            grade("m1", TimeUnit.MINUTE, 0), grade("m2", TimeUnit.MINUTE, 0), grade("m3", TimeUnit.MINUTE, 0)));
    private static final Predicate<EntityDeltas.Delta> KEPT = d -> d.rule().equals("spend") || List.of("m1", "m2", "m3").contains(d.rule());
    private static final EntityBucketMath.RuleTtls TTLS_ONE = r -> r.equals("spend") || r.equals("spend-per-sku") ? 3_024_000
            : List.of("m1", "m2", "m3").contains(r) ? 86_400 : -1;

    private static final EntityBucketMath.RuleTtls TTLS_ZERO = r -> r.startsWith("spend") ? 3_024_000 : 86_400;

    private static Grade grade(String rule, TimeUnit unit, long since) {
        return new Grade(rule, unit, "v", since, since == 0 ? null : Instant.parse("2024-10-05T00:00:00Z"),
                since == 0 ? Backfill.NONE : Backfill.PENDING);
    }

    private static CountedGrades counted(long generation, List<Grade> grades) {
        return CountedGrades.of(new RulesState(generation, Instant.EPOCH, "test", "rules: []", grades, List.of()));
    }

    /** Stage 5 over a store of encoded documents: what it changes is decoded once, and moved to the generation as it loads. */
    private static final class StageFive implements EntityBucketMath.Documents {
        final Map<String, byte[]> store;
        final Map<String, EntityBucket> changed = new LinkedHashMap<>();
        final CountedGrades counted;
        final EntityBucketMath.RuleTtls ttls;

        StageFive(Map<String, byte[]> store, CountedGrades counted, EntityBucketMath.RuleTtls ttls) {
            this.store = store;
            this.counted = counted;
            this.ttls = ttls;
        }

        @Override
        public EntityBucket changing(String key, Supplier<EntityBucket> create) {
            EntityBucket doc = changed.get(key);
            if (doc != null) return doc;
            byte[] stored = store.get(key);
            if (stored == null) {
                doc = create.get();
                doc.restart(counted.verFloor(), null);
                changed.put(key, doc);
                return doc;
            }
            doc = EntityBucketJson.read(stored);
            changed.put(key, doc);
            EntityBucketMath.loaded(this, key, doc, counted, ttls);
            return doc;
        }

        @Override
        public EntityBucket peek(String key) {
            EntityBucket doc = changed.get(key);
            return doc != null ? doc : store.containsKey(key) ? EntityBucketJson.read(store.get(key)) : null;
        }

        void apply(EntityDeltas.Delta d) {
            EntityBucketMath.apply(this, PK, d, STARTS, ttls);
        }
    }

    private static Map<String, byte[]> stored(List<EntityDeltas.Delta> deltas, EntityBucketMath.RuleTtls ttls) {
        Map<String, EntityBucket> docs = new TreeMap<>();
        for (EntityDeltas.Delta d : deltas) EntityBucketMath.apply(EntityBucketMath.Documents.in(docs), PK, d, STARTS, ttls);
        Map<String, byte[]> out = new TreeMap<>();
        docs.forEach((k, v) -> out.put(k, EntityBucketJson.write(v)));
        return out;
    }

    private static String json(EntityBucket d) {
        EntityBucket copy = EntityBucketJson.read(EntityBucketJson.write(d));
        copy.stamp("t");
        return new String(EntityBucketJson.write(copy), java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String key(TimeUnit unit, long index) {
        return BucketKey.updateKey(PK, EntityBucketId.main(unit, index));
    }

    @Test
    void aDocumentOfTheOlderGenerationEndsAsTheNewGenerationWouldHaveBuiltIt() {
        List<EntityDeltas.Delta> before = generationZeroDeltas();
        Map<String, byte[]> store = stored(before, TTLS_ZERO);
        EntityBucket hourBefore = EntityBucketJson.read(store.get(key(TimeUnit.HOUR, HOUR)));
        assertThat(hourBefore.nestsMinutes()).as("300 minute grades moved out of the hour").isFalse();
        assertThat(hourBefore.spilled()).containsKey("spend-per-sku");

        StageFive stage = new StageFive(store, GENERATION_ONE, TTLS_ONE);
        List<EntityDeltas.Delta> after = List.of(
                EntityDeltas.Delta.of("spend", null, TimeUnit.HOUR, HOUR, SPEND, 3_024_000, new BigDecimal("5.00")),
                EntityDeltas.Delta.of("spend-per-sku", "sku-new", TimeUnit.HOUR, HOUR, EntityDeltas.SUM, 3_024_000, new BigDecimal("5.00")));
        after.forEach(stage::apply);

        // what generation 1 builds from the deltas of the grades it keeps, and the new version's own
        Map<String, EntityBucket> fresh = new TreeMap<>();
        StageFive empty = new StageFive(Map.of(), GENERATION_ONE, TTLS_ONE);
        before.stream().filter(KEPT).forEach(empty::apply);
        after.forEach(empty::apply);
        fresh.putAll(empty.changed);

        EntityBucket hour = stage.changed.get(key(TimeUnit.HOUR, HOUR));
        assertThat(hour.nestsMinutes()).as("180 minute grades kept: back in their hour").isTrue();
        assertThat(hour.spilled()).as("the old version's pages are not the new one's").doesNotContainKey("spend-per-sku");
        assertThat(hour.qualified().get("spend-per-sku")).containsOnlyKeys("sku-new");
        assertThat(RulesState.generationOf(hour.ver())).isEqualTo(1);
        for (Map.Entry<String, EntityBucket> e : stage.changed.entrySet()) {
            EntityBucket doc = e.getValue();
            assertThat(RulesState.generationOf(doc.ver())).as(e.getKey()).isEqualTo(1);
            if (doc.holdsNothing()) {
                assertThat(fresh).as(e.getKey() + " holds nothing after the change: generation 1 would not have it").doesNotContainKey(e.getKey());
                assertThat(doc.ver()).as(e.getKey()).isEqualTo(RulesState.verFloor(1));
            } else {
                assertThat(json(doc)).as(e.getKey()).isEqualTo(json(fresh.get(e.getKey())));
            }
        }
        assertThat(stage.changed.keySet()).as("every spill page of the dropped version, and every minute document, rewritten")
                .filteredOn(k -> k.contains("|spend-per-sku|")).isNotEmpty();
        assertThat(stage.changed.keySet()).filteredOn(k -> k.contains("|minute|")).hasSize(60);
    }

    @Test
    void anUnchangedQualifiedRuleKeepsItsPagesAndAChangedMinuteRuleLeavesTheHour() {
        List<EntityDeltas.Delta> before = generationZeroDeltas();
        Map<String, byte[]> store = stored(before, TTLS_ZERO);
        // generation 1 changes m5 alone: its 60 grades go, the 240 left fit the hour again
        CountedGrades keepsFour = counted(1, List.of(grade("spend", TimeUnit.HOUR, 0), grade("spend-per-sku", TimeUnit.HOUR, 0),
                grade("m1", TimeUnit.MINUTE, 0), grade("m2", TimeUnit.MINUTE, 0), grade("m3", TimeUnit.MINUTE, 0),
                grade("m4", TimeUnit.MINUTE, 0), grade("m5", TimeUnit.MINUTE, 1)));
        StageFive stage = new StageFive(store, keepsFour, r -> r.startsWith("spend") ? 3_024_000 : 86_400);
        stage.apply(EntityDeltas.Delta.of("spend", null, TimeUnit.HOUR, HOUR, SPEND, 3_024_000, BigDecimal.ONE));
        EntityBucket hour = stage.changed.get(key(TimeUnit.HOUR, HOUR));
        assertThat(hour.spilled()).as("an unchanged qualified rule keeps its pages").containsKey("spend-per-sku");
        assertThat(stage.changed.keySet()).filteredOn(k -> k.contains("|spend-per-sku|")).isEmpty();
        assertThat(hour.nestsMinutes()).isTrue();
        assertThat(hour.minutes()).containsOnlyKeys("m1", "m2", "m3", "m4");
        long held = hour.ver() - RulesState.verFloor(1);
        assertThat(held).as("spend 601 + spend-per-sku 600 + four minute rules' 480").isEqualTo(601 + 600 + 480);
    }

    @Test
    void aDocumentOfANewerGenerationStopsTheOlderProcess() {
        Map<String, byte[]> store = stored(generationZeroDeltas(), TTLS_ZERO);
        StageFive newer = new StageFive(store, GENERATION_ONE, TTLS_ONE);
        newer.apply(EntityDeltas.Delta.of("spend", null, TimeUnit.DAY, DAY, SPEND, 3_024_000, BigDecimal.ONE));
        Map<String, byte[]> written = new TreeMap<>(store);
        newer.changed.forEach((k, v) -> written.put(k, EntityBucketJson.write(v)));
        StageFive older = new StageFive(written, counted(0, List.of(grade("spend", TimeUnit.DAY, 0))), TTLS_ONE);
        assertThatThrownBy(() -> older.apply(EntityDeltas.Delta.of("spend", null, TimeUnit.DAY, DAY, SPEND, 3_024_000, BigDecimal.ONE)))
                .isInstanceOf(RulesGenerationException.class)
                .hasMessageContaining("rules generation 1, newer than generation 0");
    }
}
