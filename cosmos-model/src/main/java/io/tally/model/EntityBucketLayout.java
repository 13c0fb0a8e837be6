package io.tally.model;

import java.nio.charset.StandardCharsets;

/**
 * Where a grade's bucket lives among an entity's documents, and the bound on their size. Every grade of an entity
 * in one time bucket sits in one document ({@link EntityBucket}), because Cosmos charges a write far more per
 * document than per byte (Microsoft's published write charges by item size: 1 KB 4.95 RU, 4 KB 6.67, 8 KB 7.04,
 * 16 KB 9.52, 32 KB 11.23, 64 KB 22.67). What can grow without bound is a qualified rule's values: a hot customer
 * buys thousands of SKUs in a day. So a qualified rule keeps its values inline while it has at most
 * {@link #MAX_INLINE_QUALIFIER_VALUES} of them in the bucket; past that, all its values of that bucket move to
 * {@link #SPILL_PAGES} spill pages, each value to the page its hash names.
 *
 * <p>Why the decision is by count and the page by hash: both are functions of the bucket's final contents only,
 * never of the order in which events arrived (values only ever join a bucket), so a live run and a replay of the
 * same input end with the same documents holding the same {@code ver}, which the ver-conditional write needs.
 *
 * <p>Size bound, with an entry (a grade name or qualifier value of up to ~40 characters and four decimals) at
 * ~100 bytes: the main document holds the rules' unqualified grades plus at most 64 values per qualified rule
 * (36 rules of one entity and one qualified rule: ~10 KB); a spill page holds a 16th of one rule's values, so it
 * reaches Cosmos' 2 MB item limit at ~300,000 distinct values of one rule, one entity and one bucket. Past that the
 * service refuses the write (413), and the sink sends the update to its dead-letter topic.
 *
 * <p>Minutes nest in their hour. A minute bucket is new for almost every event, so a minute document per entity and
 * minute was over half of all documents written at a rules file with minute velocity counters (51 rules: 7.25 distinct
 * documents per event, 3.02 with minutes inside their hour; docs/benchmarks/many-rules.md). An hour document keeps its
 * minutes' unqualified grades under {@code minutes} while it has at most {@link #MAX_INLINE_MINUTE_GRADES} of them
 * (rule × minute); one more, and all of them move to their minute documents for the rest of that hour, where the
 * qualified minute grades always are. The bound keeps a busy entity's hour near the size where one write of it still
 * costs less than two smaller ones (256 grades of ~40 bytes: ~10 KB, 7-9.5 RU by the published curve, against ~10 RU
 * for a 1 KB minute and a 1 KB hour), and by count it too depends only on the hour's final contents.
 */
public final class EntityBucketLayout {
    /** Values of one qualified rule kept inline in the main document; one more spills the rule in that bucket. */
    public static final int MAX_INLINE_QUALIFIER_VALUES = 64;
    /** Pages a spilled rule's values are spread over. Recorded in the main document, so readers use the writer's count. */
    public static final int SPILL_PAGES = 16;

    /** Unqualified minute grades (rule × minute) an hour keeps inline; one more moves them to minute documents. */
    public static final int MAX_INLINE_MINUTE_GRADES = 256;

    private EntityBucketLayout() {}

    /**
     * The spill page of a qualifier value among {@code pages}: a hash of its UTF-8 bytes that every JVM and every
     * version computes alike (FNV-1a, 32 bits), unlike {@code String.hashCode}, which is stable too but weak on the
     * short, similar strings qualifier values tend to be.
     */
    public static int pageOf(String qualifierValue, int pages) {
        int h = 0x811c9dc5;
        for (byte b : qualifierValue.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x01000193;
        }
        return Integer.remainderUnsigned(h, pages);
    }
}
