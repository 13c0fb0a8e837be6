package io.tally.model;

/**
 * The {@code id} of an entity bucket document within its logical partition: {@code unit|bucketIndex} for the
 * entity's main document of that bucket, {@code unit|bucketIndex|rule|page} for a spill page of one qualified rule
 * ({@link EntityBucketLayout}). The one place that writes and parses these ids. Rule names never hold a bar, so an
 * id has one bar (main) or three (page).
 *
 * @param rule null for a main document
 * @param page -1 for a main document
 */
public record EntityBucketId(TimeUnit unit, long bucketIndex, String rule, int page) {
    public static final char SEPARATOR = BucketId.SEPARATOR;

    /** The id of the main document of {@code unit}'s bucket {@code bucketIndex}. */
    public static String main(TimeUnit unit, long bucketIndex) {
        return unit.code() + SEPARATOR + bucketIndex;
    }

    /** The id of spill page {@code page} of {@code rule} in that bucket. */
    public static String page(TimeUnit unit, long bucketIndex, String rule, int page) {
        return main(unit, bucketIndex) + SEPARATOR + rule + SEPARATOR + page;
    }

    public boolean isPage() {
        return rule != null;
    }

    /**
     * Parses an id.
     *
     * @throws IllegalArgumentException naming what is wrong without quoting the input
     */
    public static EntityBucketId parse(String id) {
        String[] parts = id.split("\\|", -1);
        if (parts.length != 2 && parts.length != 4) {
            throw new IllegalArgumentException("entity bucket id must look like {unit}|{bucketIndex}[|{rule}|{page}]");
        }
        TimeUnit unit;
        try {
            unit = TimeUnit.fromCode(parts[0]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown unit in entity bucket id (minute, hour, day or month)");
        }
        try {
            long index = Long.parseLong(parts[1]);
            return parts.length == 2 ? new EntityBucketId(unit, index, null, -1)
                    : new EntityBucketId(unit, index, parts[2], Integer.parseInt(parts[3]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("entity bucket id holds a bucket index or page that is not a whole number");
        }
    }

    @Override
    public String toString() {
        return isPage() ? page(unit, bucketIndex, rule, page) : main(unit, bucketIndex);
    }
}
