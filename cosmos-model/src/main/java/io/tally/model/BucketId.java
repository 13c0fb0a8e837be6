package io.tally.model;

/**
 * A bucket document's {@code id} within its logical partition, {@code grade|unit|bucketIndex}: the one
 * place that writes and parses it. The grade comes first and is the only part that may hold any character
 * (a qualifier value is event data), so an id splits at its last two bars.
 */
public record BucketId(String grade, TimeUnit unit, long bucketIndex) {
    public static final char SEPARATOR = '|';

    /** The id of the bucket {@code bucketIndex} of {@code grade} in {@code unit}. */
    public static String format(String grade, TimeUnit unit, long bucketIndex) {
        return grade + SEPARATOR + unit.code() + SEPARATOR + bucketIndex;
    }

    /**
     * Parses an id.
     *
     * @throws IllegalArgumentException naming what is wrong without quoting the input, fit for an API client
     */
    public static BucketId parse(String id) {
        int last = id.lastIndexOf(SEPARATOR);
        int mid = last > 0 ? id.lastIndexOf(SEPARATOR, last - 1) : -1;
        if (mid <= 0) throw new IllegalArgumentException("id must look like {grade}|{unit}|{bucketIndex}");
        TimeUnit unit;
        try {
            unit = TimeUnit.fromCode(id.substring(mid + 1, last));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown unit in id (minute, hour, day or month)");
        }
        try {
            return new BucketId(id.substring(0, mid), unit, Long.parseLong(id.substring(last + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("id must end in a whole bucket index");
        }
    }

    @Override
    public String toString() {
        return format(grade, unit, bucketIndex);
    }
}
