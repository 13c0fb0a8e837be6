package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.Aggregate;
import io.tally.model.BucketDocument;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.TimeUnit;
import io.tally.model.EntityBucketJson;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/** Entity buckets as the tests compare them: bytes, per-grade views, and the {@code ver} every document must hold. */
public final class EntityBucketFixtures {
    private EntityBucketFixtures() {}

    /** Documents kept in {@code docs} by key {@code pk|id}, as the replay keeps them. */
    public static EntityBucketMath.Documents in(Map<String, EntityBucket> docs) {
        return EntityBucketMath.Documents.in(docs);
    }

    /** Retentions of the rules the tests' deltas use: {@code spend*} 35 days, any other rule one hour. */
    public static final EntityBucketMath.RuleTtls TTLS = rule -> rule.startsWith("spend") ? 3_024_000 : 3_600;

    /**
     * Each document's JSON by key {@code pk|id}, every one stamped with the same {@code updatedAt} first (the one field
     * that differs between two runs of the same input).
     */
    public static Map<String, String> json(Collection<EntityBucket> docs) {
        Map<String, String> out = new TreeMap<>();
        for (EntityBucket d : docs) {
            d.stamp("2000-01-01T00:00:00Z");
            assertThat(out.put(BucketKey.updateKey(d.pk(), d.id()), new String(EntityBucketJson.write(d), StandardCharsets.UTF_8)))
                    .as("one document per key").isNull();
        }
        return out;
    }

    /** Every grade bucket held by {@code docs}, by {@code pk|viewId}; a grade held twice fails. */
    public static Map<String, Aggregate> views(Collection<EntityBucket> docs) {
        Map<String, Aggregate> out = new TreeMap<>();
        for (EntityBucket d : docs) {
            for (BucketDocument v : d.views()) {
                assertThat(out.put(BucketKey.updateKey(v.pk(), v.id()), Aggregate.of(v))).as("%s held once", v.id()).isNull();
            }
        }
        return out;
    }

    /**
     * A page's {@code ver} is the events of its values; a main document's is every event of its entity bucket, those
     * of its pages included. So each is what a replay of the same input reaches.
     */
    public static void assertVersCountEvents(Collection<EntityBucket> docs) {
        Map<String, Long> eventsByMain = new HashMap<>();
        for (EntityBucket d : docs) {
            long events = d.views().stream().mapToLong(BucketDocument::count).sum();
            EntityBucketId id = EntityBucketId.parse(d.id());
            eventsByMain.merge(BucketKey.updateKey(d.pk(), EntityBucketId.main(id.unit(), id.bucketIndex())), events, Long::sum);
            if (d.isPage()) assertThat(d.ver()).as("ver of page %s", d).isEqualTo(events);
            if (!d.isPage() && id.unit() == TimeUnit.MINUTE) { // an hour whose minutes spilled counts them too
                long spilled = d.grades().values().stream().mapToLong(Aggregate::count).sum();
                eventsByMain.merge(BucketKey.updateKey(d.pk(), EntityBucketId.main(TimeUnit.HOUR, EntityBucket.hourOf(id.bucketIndex()))),
                        spilled, Long::sum);
            }
        }
        for (EntityBucket d : docs) {
            if (!d.isPage()) assertThat(d.ver()).as("ver of %s", d).isEqualTo(eventsByMain.get(BucketKey.updateKey(d.pk(), d.id())));
        }
        for (EntityBucket d : docs) {
            if (d.unit().equals("hour") && !d.isPage()) {
                assertThat(d.nestsMinutes()).as("%s nests its minutes unless past the bound", d)
                        .isEqualTo(docs.stream().noneMatch(m -> !m.isPage() && m.unit().equals("minute") && m.pk().equals(d.pk())
                                && EntityBucket.hourOf(EntityBucketId.parse(m.id()).bucketIndex()) == EntityBucketId.parse(d.id()).bucketIndex()
                                && !m.grades().isEmpty()));
            }
        }
    }
}
