package io.tally.read;

import io.tally.model.BucketDocument;
import io.tally.model.GradeId;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import java.time.Instant;

/**
 * Each grade's own retention over the entity buckets that hold it. An entity bucket lives as long as the longest
 * retention of its grades (its {@code ttl}), so a grade of a shorter retention can outlive its own in Cosmos; the read
 * API hides it once the rule no longer keeps it: when its bucket ended more than the rule's retention ago. That is the
 * earliest a per-grade document could have expired (the last event a bucket can take arrives within the retention of
 * the bucket's end), so no bucket is answered that the grade's own ttl would have removed. Grades of rules this
 * service does not know are answered while their document lives.
 */
final class GradeRetention {
    private final GradeRules rules;

    GradeRetention(GradeRules rules) {
        this.rules = rules;
    }

    /** Whether {@code bucket}'s rule no longer keeps it at {@code now}. */
    boolean expired(BucketDocument bucket, Instant now) {
        GradeRule rule = rules.rule(GradeId.parse(bucket.grade()).rule()).orElse(null);
        if (rule == null) return false;
        TimeUnit unit = TimeUnit.fromCode(bucket.unit());
        Instant end = unit.bucketStart(unit.bucketIndex(Instant.parse(bucket.bucket())) + 1);
        return end.plus(rule.retention()).isBefore(now);
    }

    /** The bucket with its rule's own ttl, as a per-grade document carried it (the entity bucket's otherwise). */
    BucketDocument withTtl(BucketDocument bucket) {
        return rules.rule(GradeId.parse(bucket.grade()).rule())
                .map(r -> new BucketDocument(bucket.pk(), bucket.id(), bucket.grade(), bucket.unit(), bucket.bucket(), bucket.sum(),
                        bucket.count(), bucket.min(), bucket.max(), bucket.ver(), r.ttlSeconds(), bucket.updatedAt()))
                .orElse(bucket);
    }
}
