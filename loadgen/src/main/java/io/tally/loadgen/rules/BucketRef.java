package io.tally.loadgen.rules;

/**
 * One bucket, in parts: cheap to hash (no string building per event), turned into the Cosmos keys only
 * when written. pk = {@code domain|entity}; id = {@code grade|unit|index}, grade = {@code rule} or
 * {@code rule:qualifier}.
 *
 * @param qualifier the qualifier value, or null for rules without one
 */
public record BucketRef(String domain, String entity, String rule, String qualifier, TimeUnit unit, long index) {
    public String pk() {
        return domain + '|' + entity;
    }

    public String id() {
        return (qualifier == null ? rule : rule + ':' + qualifier) + '|' + unit.code() + '|' + index;
    }
}
