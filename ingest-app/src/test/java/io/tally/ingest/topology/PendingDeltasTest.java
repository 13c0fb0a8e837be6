package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.BucketId;
import io.tally.model.EntityBucket;
import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class PendingDeltasTest {
    private static final int SPEND = EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX;

    private static EntityDeltas event(String pk, String amount, long hour) {
        return event(pk, amount, hour, null);
    }

    /** With a {@code sku}, also a delta of the qualified rule {@code spend-per-sku}. */
    private static EntityDeltas event(String pk, String amount, long hour, String sku) {
        BigDecimal a = new BigDecimal(amount);
        List<EntityDeltas.Delta> deltas = new ArrayList<>(List.of(
                EntityDeltas.Delta.of("spend", null, TimeUnit.HOUR, hour, SPEND, 60, a),
                EntityDeltas.Delta.of("spend", null, TimeUnit.DAY, hour / 24, SPEND, 60, a),
                EntityDeltas.Delta.of("orders", null, TimeUnit.HOUR, hour, EntityDeltas.VALUE_ONE, 60, a)));
        if (sku != null) deltas.add(EntityDeltas.Delta.of("spend-per-sku", sku, TimeUnit.DAY, hour / 24, EntityDeltas.SUM, 120, a));
        return new EntityDeltas(pk, deltas);
    }

    @Test
    void combinesEveryBucketOfAPkIntoOneDeltaAndOneBundlePerPk() {
        PendingDeltas pending = new PendingDeltas();
        pending.add(event("d|a", "10.00", 100, "s-1"), 5);
        pending.add(event("d|b", "1", 100), 9);
        pending.add(event("d|a", "2.50", 100, "s-2"), 7);
        pending.add(event("d|a", "0.01", 101, "s-1"), 6); // another hour, the same day

        assertThat(pending.size()).isEqualTo(4 + 3 + 1 + 2);
        assertThat(pending.timestamp()).isEqualTo(9);
        List<EntityDeltas> drained = pending.drain();
        assertThat(pending.isEmpty()).isTrue();
        assertThat(drained).extracting(EntityDeltas::pk).containsExactly("d|a", "d|b");

        Map<String, EntityDeltas.Delta> a = new HashMap<>();
        drained.get(0).deltas().forEach(d -> a.put(BucketId.format(d.grade(), d.unit(), d.bucketIndex()), d));
        EntityDeltas.Delta hour = a.get("spend|hour|100");
        assertThat(hour.count()).isEqualTo(2);
        assertThat(hour.sum()).isEqualTo(new BigDecimal("12.50"));
        assertThat(hour.min()).isEqualTo(new BigDecimal("2.50"));
        assertThat(hour.max()).isEqualTo(new BigDecimal("10.00"));
        assertThat(a.get("spend|day|4").count()).isEqualTo(3);
        assertThat(a.get("spend|day|4").sum()).isEqualTo(new BigDecimal("12.51"));
        assertThat(a.get("orders|hour|100").count()).isEqualTo(2);
        assertThat(a.get("orders|hour|100").sum()).isNull();
        assertThat(a.get("spend-per-sku:s-1|day|4")).satisfies(s1 -> {
            assertThat(s1.qualifier()).isEqualTo("s-1");
            assertThat(s1.count()).isEqualTo(2);
            assertThat(s1.sum()).isEqualTo(new BigDecimal("10.01"));
        });
        assertThat(a.get("spend-per-sku:s-2|day|4").count()).isEqualTo(1);
    }

    /**
     * Live combines, replay applies event by event: both must end with the same documents, ver included, also when a
     * qualified rule spills past its inline values in some entity buckets.
     */
    @Test
    void applyingCombinedDeltasEqualsApplyingEveryEventAlone() {
        Random random = new Random(42);
        BucketStarts starts = new BucketStarts();
        Map<String, EntityBucket> oneByOne = new TreeMap<>();
        Map<String, EntityBucket> combined = new TreeMap<>();
        PendingDeltas pending = new PendingDeltas();
        for (int i = 0; i < 5_000; i++) {
            EntityDeltas e = event("d|" + random.nextInt(20), random.nextInt(100_000) + "." + random.nextInt(100), 100 + random.nextInt(48),
                    "sku-" + random.nextInt(150));
            for (EntityDeltas.Delta d : e.deltas()) EntityBucketMath.apply(EntityBucketFixtures.in(oneByOne), e.pk(), d, starts, EntityBucketFixtures.TTLS);
            pending.add(e, i);
            if (random.nextInt(200) == 0 || i == 4_999) { // commits at random points
                for (EntityDeltas bundle : pending.drain()) {
                    for (EntityDeltas.Delta d : bundle.deltas()) EntityBucketMath.apply(EntityBucketFixtures.in(combined), bundle.pk(), d, starts, EntityBucketFixtures.TTLS);
                }
            }
        }
        assertThat(combined.values()).as("some entity day spilled its SKUs").anyMatch(EntityBucket::isPage);
        assertThat(EntityBucketFixtures.json(combined.values())).isEqualTo(EntityBucketFixtures.json(oneByOne.values()));
        EntityBucketFixtures.assertVersCountEvents(combined.values());
    }
}
