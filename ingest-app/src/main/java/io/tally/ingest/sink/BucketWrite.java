package io.tally.ingest.sink;

import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import org.apache.kafka.common.TopicPartition;

/**
 * The context object of one bulk operation: the newest version of one entity bucket document in a window, where it
 * came from, and how its write is going. It rides on the Cosmos operation ({@code getContext()}) so
 * every response maps back to its bucket and Kafka coordinates.
 *
 * <p>Thread contract: built on the poll thread; afterwards touched by one bulk call or retry at a time
 * (the BulkWriter never has two attempts of one write in flight), so the mutable fields need no lock.
 */
public final class BucketWrite {
    final TopicPartition partition;
    final String key;            // pk|id, the Kafka key
    EntityBucketJson.Parts doc;  // null until decoded; stays null for a record that cannot be
    byte[] raw;                  // the newest record's value, for the DLQ
    long offset;                 // the newest record's offset
    int coalesced = 1;           // updates this write stands for
    String poison;               // why the record could not be decoded, or null
    boolean behind;              // written behind updates that keep up (Coalescer): its in-flight count is bounded
    final OffsetTracker.Segment segment;

    WriteKind kind = WriteKind.PATCH_IF_NEWER;
    int attempt;                 // attempts made so far
    long firstAttemptNanos;
    int lastStatus;
    int lastSubStatus;
    boolean stalled;
    long generation;             // of the partition when submitted; a newer one means abandoned

    BucketWrite(TopicPartition partition, String key, EntityBucketJson.Parts doc, byte[] raw, long offset, OffsetTracker.Segment segment) {
        this.partition = partition;
        this.key = key;
        this.doc = doc;
        this.raw = raw;
        this.offset = offset;
        this.segment = segment;
    }

    /**
     * A write of a document computed outside the poll loop (the replay job): no Kafka record behind it and
     * nothing to commit; {@code origin} only names where it came from in logs and groups in-flight counts.
     */
    public static BucketWrite of(TopicPartition origin, EntityBucket d) {
        return new BucketWrite(origin, BucketKey.updateKey(d.pk(), d.id()), EntityBucketJson.parts(d), null, -1, new OffsetTracker.Segment(origin, -1));
    }

    public String bucketId() { return doc != null ? BucketKey.updateKey(doc.pk(), doc.id()) : key; }

    public long ver() { return doc != null ? doc.ver() : -1; }

    public int attempt() { return attempt; }

    public int coalesced() { return coalesced; }

    public WriteKind kind() { return kind; }

    public EntityBucketJson.Parts document() { return doc; }

    /** Coordinates for logs: never the document's values. */
    @Override
    public String toString() {
        return bucketId() + " ver " + ver() + " (" + partition + "@" + offset + ", " + coalesced + " update(s), attempt " + attempt + ")";
    }
}
