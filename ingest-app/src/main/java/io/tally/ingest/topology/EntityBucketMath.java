package io.tally.ingest.topology;

import io.tally.model.Aggregate;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketLayout;
import io.tally.model.TimeUnit;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Stage 5's arithmetic, shared by the live aggregation and replay so the two cannot disagree: where a delta goes
 * among an entity's documents ({@link EntityBucketLayout}) and what it does to them. A delta always moves the
 * {@code ver} of its bucket's main document by its count (an unqualified minute's: its hour's; that document counts
 * every grade update of the entity bucket, spilled ones too); a delta of a spilled rule also moves its spill page's,
 * and one of an hour whose minutes moved out its minute document's. So a replay of the same input gives
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

    /** A rule's retention in seconds (a delta's {@code ttlSeconds}), or -1 for a rule the deployment no longer has. */
    @FunctionalInterface
    public interface RuleTtls {
        int ttlSeconds(String rule);
    }

    /**
     * Applies {@code d}, a delta of the entity {@code pk}, to the documents it belongs in. {@code ttls} gives the
     * retention of the other rules a delta may move with it (an hour's minutes, when they spill).
     */
    public static void apply(Documents docs, String pk, EntityDeltas.Delta d, BucketStarts starts, RuleTtls ttls) {
        if (d.unit() == TimeUnit.MINUTE && d.qualifier() == null) {
            minute(docs, pk, d, starts, ttls);
            return;
        }
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

    /**
     * The unit and bucket of the main document {@code d} lands in: its own, but an hour for an unqualified minute
     * grade (a replay writes only documents whose whole bucket lies in its range).
     */
    public static TimeUnit documentUnit(EntityDeltas.Delta d) {
        return d.unit() == TimeUnit.MINUTE && d.qualifier() == null ? TimeUnit.HOUR : d.unit();
    }

    /** The bucket index of the main document {@code d} lands in ({@link #documentUnit}). */
    public static long documentIndex(EntityDeltas.Delta d) {
        return d.unit() == TimeUnit.MINUTE && d.qualifier() == null ? EntityBucket.hourOf(d.bucketIndex()) : d.bucketIndex();
    }

    /**
     * An unqualified minute grade: into its hour while the hour nests its minutes, moving them all to their minute
     * documents past {@link EntityBucketLayout#MAX_INLINE_MINUTE_GRADES}; the hour's {@code ver} counts it either way.
     */
    private static void minute(Documents docs, String pk, EntityDeltas.Delta d, BucketStarts starts, RuleTtls ttls) {
        long hourIndex = EntityBucket.hourOf(d.bucketIndex());
        EntityBucket hour = docs.changing(BucketKey.updateKey(pk, EntityBucketId.main(TimeUnit.HOUR, hourIndex)),
                () -> EntityBucket.main(pk, TimeUnit.HOUR, hourIndex, starts.isoStart(TimeUnit.HOUR, hourIndex)));
        if (!hour.nestsMinutes()) {
            hour.countSpilled(d.count(), d.ttlSeconds());
            minuteDocument(docs, pk, d.bucketIndex(), starts).addGrade(d.rule(), d.aggregate(), d.ttlSeconds());
            return;
        }
        hour.addMinute(d.rule(), EntityBucket.minuteOfHour(d.bucketIndex()), d.aggregate(), d.ttlSeconds());
        if (hour.minuteGrades() > EntityBucketLayout.MAX_INLINE_MINUTE_GRADES) {
            long first = hourIndex * 60;
            int hourTtl = hour.ttl();
            hour.spillMinutes().forEach((rule, byMinute) -> {
                // each rule's own retention, not the delta's: the minute documents end with the same ttl whichever
                // delta tipped the hour over (a rule gone from the file keeps the hour's, which covers it)
                int known = rule.equals(d.rule()) ? d.ttlSeconds() : ttls.ttlSeconds(rule);
                int ttl = known >= 0 ? known : hourTtl;
                byMinute.forEach((m, a) -> minuteDocument(docs, pk, first + m, starts).addGrade(rule, a, ttl));
            });
        }
    }

    private static EntityBucket minuteDocument(Documents docs, String pk, long minuteIndex, BucketStarts starts) {
        return docs.changing(BucketKey.updateKey(pk, EntityBucketId.main(TimeUnit.MINUTE, minuteIndex)),
                () -> EntityBucket.main(pk, TimeUnit.MINUTE, minuteIndex, starts.isoStart(TimeUnit.MINUTE, minuteIndex)));
    }

    private static EntityBucket page(Documents docs, String pk, EntityDeltas.Delta d, String start, int page) {
        return docs.changing(BucketKey.updateKey(pk, EntityBucketId.page(d.unit(), d.bucketIndex(), d.rule(), page)),
                () -> EntityBucket.page(pk, d.unit(), d.bucketIndex(), start, d.rule(), page));
    }
}
