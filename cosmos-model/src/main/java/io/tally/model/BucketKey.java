package io.tally.model;

import java.util.Objects;

/**
 * Where a bucket lives in Cosmos. {@code pk = domain|entityKey} puts every grade and bucket of one
 * entity in one logical partition; {@code id = grade|unit|bucketIndex} ({@link BucketId}) makes the
 * bucket addressable by a point read.
 */
public record BucketKey(String domain, String entityKey, String grade, TimeUnit unit, long bucketIndex) {
    /** The id's separator, so that pk, id and {@code pk|id} read alike and one change reaches them all. */
    public static final char SEPARATOR = BucketId.SEPARATOR;

    public BucketKey {
        Objects.requireNonNull(domain, "domain");
        Objects.requireNonNull(entityKey, "entityKey");
        Objects.requireNonNull(grade, "grade");
        Objects.requireNonNull(unit, "unit");
    }

    public String pk() {
        return partitionKey(domain, entityKey);
    }

    public String id() {
        return BucketId.format(grade, unit, bucketIndex);
    }

    /** The Kafka key of a bucket update: {@code pk|id}, so compaction keeps one value per bucket. */
    public String updateKey() {
        return updateKey(pk(), id());
    }

    public static String partitionKey(String domain, String entityKey) {
        return domain + SEPARATOR + entityKey;
    }

    /** The Kafka key of the update of bucket {@code id} in partition {@code pk}, also its key in the bucket store. */
    public static String updateKey(String pk, String id) {
        return pk + SEPARATOR + id;
    }
}
