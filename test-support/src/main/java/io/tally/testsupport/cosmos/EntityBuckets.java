package io.tally.testsupport.cosmos;

import io.tally.ingest.topology.BucketStarts;
import io.tally.ingest.topology.EntityBucketMath;
import io.tally.ingest.topology.EntityDeltas;
import io.tally.model.BucketId;
import io.tally.model.BucketKey;
import io.tally.model.BucketDocument;
import io.tally.model.EntityBucket;
import io.tally.model.GradeId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Grade buckets (what the read API answers, what a test or benchmark reasons in) as the entity bucket documents the
 * pipeline would store for them, laid out by the aggregation's own arithmetic ({@link EntityBucketMath}): documents
 * seeded straight into a container look exactly like written ones, spill pages included.
 */
public final class EntityBuckets {
    private EntityBuckets() {}

    /**
     * The documents holding {@code grades}, each grade bucket applied as one delta of its values (so its view's ver
     * is its count) with its ttl, every document stamped with the newest {@code updatedAt} among its grades.
     *
     * @throws IllegalArgumentException for a grade bucket without ttl: an entity bucket always has one
     */
    public static List<EntityBucket> of(Collection<BucketDocument> grades) {
        Map<String, EntityBucket> docs = new LinkedHashMap<>();
        Map<String, String> stamps = new LinkedHashMap<>();
        BucketStarts starts = new BucketStarts();
        Map<String, Integer> ttls = new LinkedHashMap<>();
        for (BucketDocument g : grades) if (g.ttl() != null) ttls.merge(GradeId.parse(BucketId.parse(g.id()).grade()).rule(), g.ttl(), Math::max);
        for (BucketDocument g : grades) {
            if (g.ttl() == null) throw new IllegalArgumentException("grade bucket " + g.pk() + "|" + g.id() + " has no ttl");
            BucketId id = BucketId.parse(g.id());
            GradeId grade = GradeId.parse(id.grade());
            int aggregations = (g.sum() == null ? 0 : EntityDeltas.SUM) | (g.min() == null ? 0 : EntityDeltas.MIN)
                    | (g.max() == null ? 0 : EntityDeltas.MAX);
            EntityDeltas.Delta delta = new EntityDeltas.Delta(grade.rule(), grade.qualifier().orElse(null), id.unit(), id.bucketIndex(),
                    aggregations, g.ttl(), g.count(), g.sum(), g.min(), g.max());
            EntityBucketMath.apply(new EntityBucketMath.Documents() {
                @Override
                public EntityBucket changing(String key, java.util.function.Supplier<EntityBucket> create) {
                    if (g.updatedAt() != null) stamps.merge(key, g.updatedAt(), (a, b) -> a.compareTo(b) >= 0 ? a : b);
                    return docs.computeIfAbsent(key, k -> create.get());
                }

                @Override
                public EntityBucket peek(String key) {
                    return docs.get(key);
                }
            }, g.pk(), delta, starts, rule -> ttls.getOrDefault(rule, -1));
        }
        stamps.forEach((key, time) -> docs.get(key).stamp(time));
        return new ArrayList<>(docs.values());
    }

    /** The key ({@code pk|id}) of a document, as on {@code bucket-updates}. */
    public static String key(EntityBucket d) {
        return BucketKey.updateKey(d.pk(), d.id());
    }
}
