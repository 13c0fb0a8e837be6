package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PendingDeltasTest {
    private static final int SPEND = EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX;

    private static EntityDeltas event(String pk, String amount, long hour) {
        BigDecimal a = new BigDecimal(amount);
        return new EntityDeltas(pk, List.of(
                EntityDeltas.Delta.of("spend", TimeUnit.HOUR, hour, SPEND, 60, a),
                EntityDeltas.Delta.of("spend", TimeUnit.DAY, hour / 24, SPEND, 60, a),
                EntityDeltas.Delta.of("orders", TimeUnit.HOUR, hour, EntityDeltas.VALUE_ONE, 60, a)));
    }

    @Test
    void combinesEveryBucketOfAPkIntoOneDeltaAndOneBundlePerPk() {
        PendingDeltas pending = new PendingDeltas();
        pending.add(event("d|a", "10.00", 100), 5);
        pending.add(event("d|b", "1", 100), 9);
        pending.add(event("d|a", "2.50", 100), 7);
        pending.add(event("d|a", "0.01", 101), 6); // another hour, the same day

        assertThat(pending.size()).isEqualTo(3 + 3 + 2);
        assertThat(pending.timestamp()).isEqualTo(9);
        List<EntityDeltas> drained = pending.drain();
        assertThat(pending.isEmpty()).isTrue();
        assertThat(drained).extracting(EntityDeltas::pk).containsExactly("d|a", "d|b");

        Map<String, EntityDeltas.Delta> a = new HashMap<>();
        drained.get(0).deltas().forEach(d -> a.put(d.id(), d));
        EntityDeltas.Delta hour = a.get("spend|hour|100");
        assertThat(hour.count()).isEqualTo(2);
        assertThat(hour.sum()).isEqualTo(new BigDecimal("12.50"));
        assertThat(hour.min()).isEqualTo(new BigDecimal("2.50"));
        assertThat(hour.max()).isEqualTo(new BigDecimal("10.00"));
        assertThat(a.get("spend|day|4").count()).isEqualTo(3);
        assertThat(a.get("spend|day|4").sum()).isEqualTo(new BigDecimal("12.51"));
        assertThat(a.get("orders|hour|100").count()).isEqualTo(2);
        assertThat(a.get("orders|hour|100").sum()).isNull();
    }

    /** Live combines, replay applies event by event: both must end with the same documents, ver included. */
    @Test
    void applyingCombinedDeltasEqualsApplyingEveryEventAlone() {
        Random random = new Random(42);
        BucketStarts starts = new BucketStarts();
        Map<String, BucketDocument> oneByOne = new HashMap<>();
        Map<String, BucketDocument> combined = new HashMap<>();
        PendingDeltas pending = new PendingDeltas();
        for (int i = 0; i < 5_000; i++) {
            EntityDeltas e = event("d|" + random.nextInt(20), random.nextInt(100_000) + "." + random.nextInt(100), 100 + random.nextInt(48));
            for (EntityDeltas.Delta d : e.deltas()) oneByOne.merge(e.bucketKey(d), BucketMath.apply(null, e.pk(), d, starts),
                    (before, ignored) -> BucketMath.apply(before, e.pk(), d, starts));
            pending.add(e, i);
            if (random.nextInt(200) == 0 || i == 4_999) { // commits at random points
                for (EntityDeltas bundle : pending.drain()) {
                    for (EntityDeltas.Delta d : bundle.deltas()) {
                        combined.put(bundle.bucketKey(d), BucketMath.apply(combined.get(bundle.bucketKey(d)), bundle.pk(), d, starts));
                    }
                }
            }
        }
        assertThat(combined).isEqualTo(oneByOne);
        assertThat(combined.values()).allSatisfy(doc -> assertThat(doc.ver()).isEqualTo(doc.count()));
    }
}
