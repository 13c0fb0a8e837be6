package io.tally.ingest.topology;

import io.tally.model.Aggregate;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketLayout;
import io.tally.model.TimeUnit;
import io.tally.rules.state.RulesState;
import java.util.ArrayList;
import java.util.List;
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

        /** The document under {@code key} as it stands, or null; only read, never changed. */
        EntityBucket peek(String key);

        /** Documents kept in {@code docs} by key, each made by its creator and never moved between generations. */
        static Documents in(Map<String, EntityBucket> docs) {
            return new Documents() {
                @Override
                public EntityBucket changing(String key, Supplier<EntityBucket> create) {
                    return docs.computeIfAbsent(key, k -> create.get());
                }

                @Override
                public EntityBucket peek(String key) {
                    return docs.get(key);
                }
            };
        }
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
     * A document stage 5 has just read from its store under {@code key}, before anything changes it: one of an older
     * rules generation moves to {@code counted}'s ({@link #rebase}); one of a newer generation means another instance
     * already counts rules this process does not know, and nothing may be written over it.
     *
     * @throws RulesGenerationException for a document of a newer generation
     */
    public static void loaded(Documents docs, String key, EntityBucket doc, CountedGrades counted, RuleTtls ttls) {
        long generation = RulesState.generationOf(doc.ver());
        if (generation > counted.generation()) throw new RulesGenerationException(key, generation, counted.generation());
        if (generation < counted.generation()) rebase(docs, doc, counted, ttls);
    }

    /**
     * Moves {@code doc}, last written under an older rules generation, to the generation of {@code counted}: the values
     * of every grade that generation does not keep leave it (a removed grade, a changed grade's old version), with the
     * spill pages of a dropped qualified rule and the dropped grades of an hour's moved-out minutes; an hour left with
     * few enough minute grades takes them back from its minute documents. Its {@code ver} restarts at the generation's
     * floor plus the grade updates it still counts, and its {@code ttl} follows the grades it still holds. So a document
     * sheds a retired grade at its next write, and ends as a replay under the new generation would build it. Pages and
     * minute documents are always moved with their main document, which is changed first (they come through
     * {@code docs}, which moves them too when it loads them).
     */
    static void rebase(Documents docs, EntityBucket doc, CountedGrades counted, RuleTtls ttls) {
        long generation = RulesState.generationOf(doc.ver());
        long held = doc.ver() - RulesState.verFloor(generation);
        List<String> droppedSpills = new ArrayList<>();
        long dropped = doc.drop((rule, unit) -> counted.keeps(rule, unit, generation), droppedSpills);
        String pk = doc.pk();
        EntityBucketId where = EntityBucketId.parse(doc.id());
        java.util.Set<String> rules = new java.util.TreeSet<>(doc.rulesHeld());
        for (String rule : droppedSpills) {
            for (int p = 0; p < EntityBucketLayout.SPILL_PAGES; p++) {
                String pageKey = BucketKey.updateKey(pk, EntityBucketId.page(where.unit(), where.bucketIndex(), rule, p));
                EntityBucket page = docs.peek(pageKey);
                if (page == null) continue;
                for (Map<String, Aggregate> values : page.qualified().values()) for (Aggregate a : values.values()) dropped += a.count();
                docs.changing(pageKey, () -> page);
            }
        }
        if (!doc.isPage() && where.unit() == TimeUnit.HOUR && !doc.nestsMinutes()) {
            dropped += movedOutMinutes(docs, doc, where, counted, generation, rules);
        }
        int ttl = -1;
        for (String r : rules) ttl = Math.max(ttl, ttls.ttlSeconds(r));
        doc.restart(counted.verFloor() + held - dropped, ttl >= 0 ? ttl : null);
    }

    /**
     * The dropped grades of an hour's moved-out minutes: gone from the minute documents, counted out of the hour. When
     * the grades kept fit the hour again, they go back into it, as the layout would have placed them had the dropped
     * grades never been counted. Adds the rules of the minute grades kept to {@code rules}.
     */
    private static long movedOutMinutes(Documents docs, EntityBucket hour, EntityBucketId where, CountedGrades counted, long generation,
                                        java.util.Set<String> rules) {
        long first = where.bucketIndex() * 60;
        long dropped = 0;
        Map<String, Map<Integer, Aggregate>> kept = new TreeMap<>();
        List<String> holding = new ArrayList<>();
        for (long m = first; m < first + 60; m++) {
            String minuteKey = BucketKey.updateKey(hour.pk(), EntityBucketId.main(TimeUnit.MINUTE, m));
            EntityBucket minute = docs.peek(minuteKey);
            if (minute == null) continue;
            boolean any = false;
            for (Map.Entry<String, Aggregate> g : minute.grades().entrySet()) {
                if (counted.keeps(g.getKey(), TimeUnit.MINUTE, generation)) {
                    kept.computeIfAbsent(g.getKey(), r -> new TreeMap<>()).put(EntityBucket.minuteOfHour(m), g.getValue());
                } else {
                    dropped += g.getValue().count();
                }
                any = true;
            }
            if (any) holding.add(minuteKey);
        }
        int keptGrades = kept.values().stream().mapToInt(Map::size).sum();
        boolean renest = dropped > 0 && keptGrades <= EntityBucketLayout.MAX_INLINE_MINUTE_GRADES;
        for (String minuteKey : holding) {
            EntityBucket minute = docs.changing(minuteKey, () -> docs.peek(minuteKey)); // moved to the generation as it loads
            if (renest) {
                minute.drop((r, u) -> false, new ArrayList<>());
                minute.restart(counted.verFloor(), null);
            }
        }
        if (renest) hour.nestMinutes(kept);
        rules.addAll(kept.keySet());
        return dropped;
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
