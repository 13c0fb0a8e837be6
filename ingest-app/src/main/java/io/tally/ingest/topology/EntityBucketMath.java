package io.tally.ingest.topology;

import io.tally.model.Aggregate;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketLayout;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Stage 5's arithmetic, shared by the live aggregation and replay so the two cannot disagree: where a delta goes
 * among an entity's documents ({@link EntityBucketLayout}) and what it does to them. A delta always moves the
 * {@code ver} of its bucket's main document by its count (that document counts every event of the entity bucket,
 * spilled ones too); a delta of a spilled rule also moves its spill page's. So a replay of the same input gives
 * every document the {@code ver} the live run gave it, however the live run combined the deltas on the way. The
 * combine itself is the document model's ({@link Aggregate}), the one the read API's roll-ups use too.
 */
public final class EntityBucketMath {
    private EntityBucketMath() {}

    /** The documents a delta may touch, by key {@code pk|id}. */
    public interface Documents {
        /** The document under {@code key}, made with {@code create} when there is none; the caller will change it. */
        EntityBucket changing(String key, Supplier<EntityBucket> create);
    }

    /** Applies {@code d}, a delta of the entity {@code pk}, to the documents it belongs in. */
    public static void apply(Documents docs, String pk, EntityDeltas.Delta d, BucketStarts starts) {
        String start = starts.isoStart(d.unit(), d.bucketIndex());
        EntityBucket main = docs.changing(BucketKey.updateKey(pk, EntityBucketId.main(d.unit(), d.bucketIndex())),
                () -> EntityBucket.main(pk, d.unit(), d.bucketIndex(), start));
        Aggregate delta = d.aggregate();
        if (d.qualifier() == null) {
            main.addGrade(d.rule(), delta, d.ttlSeconds());
            return;
        }
        int pages = main.spilledPages(d.rule());
        if (pages > 0) {
            main.countSpilled(d.count(), d.ttlSeconds());
            page(docs, pk, d, start, EntityBucketLayout.pageOf(d.qualifier(), pages))
                    .addQualified(d.rule(), d.qualifier(), delta, d.ttlSeconds());
            return;
        }
        main.addQualified(d.rule(), d.qualifier(), delta, d.ttlSeconds());
        if (main.qualifierValues(d.rule()) > EntityBucketLayout.MAX_INLINE_QUALIFIER_VALUES) {
            Map<Integer, Map<String, Aggregate>> byPage = new TreeMap<>();
            main.spill(d.rule(), EntityBucketLayout.SPILL_PAGES).forEach((q, a) -> byPage
                    .computeIfAbsent(EntityBucketLayout.pageOf(q, EntityBucketLayout.SPILL_PAGES), p -> new TreeMap<>()).put(q, a));
            byPage.forEach((p, values) -> page(docs, pk, d, start, p).addSpilled(values, d.ttlSeconds()));
        }
    }

    private static EntityBucket page(Documents docs, String pk, EntityDeltas.Delta d, String start, int page) {
        return docs.changing(BucketKey.updateKey(pk, EntityBucketId.page(d.unit(), d.bucketIndex(), d.rule(), page)),
                () -> EntityBucket.page(pk, d.unit(), d.bucketIndex(), start, d.rule(), page));
    }
}
