package io.tally.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.math.BigDecimal;

/**
 * One time bucket as stored in Cosmos: absolute values, never deltas, so every retry and replay of
 * a write is idempotent. {@code ver} grows with every change of the bucket; a writer must never
 * replace a document with a higher {@code ver}.
 *
 * @param bucket ISO-8601 start of the bucket (UTC)
 * @param ttl    seconds Cosmos keeps the document after its last write (from the rule's retention)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true) // Cosmos adds _rid, _etag, _ts, ...
public record BucketDocument(
        String pk,
        String id,
        String grade,
        String unit,
        String bucket,
        BigDecimal sum,
        long count,
        BigDecimal min,
        BigDecimal max,
        long ver,
        Integer ttl,
        String updatedAt) {

    /**
     * Grade {@code gradeId}'s bucket {@code index} of {@code unit} with values {@code a}, as the read API shows it: its
     * {@code ver} is its count (one per event, the ver a per-grade document carried).
     */
    public static BucketDocument ofGrade(String pk, String gradeId, TimeUnit unit, long index, String bucketStart, Aggregate a,
                                         Integer ttl, String updatedAt) {
        return new BucketDocument(pk, BucketId.format(gradeId, unit, index), gradeId, unit.code(), bucketStart,
                a.sum(), a.count(), a.min(), a.max(), a.count(), ttl, updatedAt);
    }

    public BucketDocument withUpdatedAt(String time) {
        return new BucketDocument(pk, id, grade, unit, bucket, sum, count, min, max, ver, ttl, time);
    }
}
