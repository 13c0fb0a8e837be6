package io.tally.model;

import java.util.Optional;

/**
 * The {@code grade} of a bucket document: a rule's name, or {@code name:qualifierValue} for a rule kept per
 * qualifier value (spend per customer per SKU), so every qualifier value's buckets stay in the entity's
 * partition. Rule names never hold {@code :}, so an id splits at its first colon.
 */
public record GradeId(String rule, Optional<String> qualifier) {
    public static final char QUALIFIER_SEPARATOR = ':';

    /** The grade id of {@code rule}, for {@code qualifierValue} when the rule has a qualifier (else null). */
    public static String format(String rule, String qualifierValue) {
        return qualifierValue == null ? rule : rule + QUALIFIER_SEPARATOR + qualifierValue;
    }

    /** Splits a grade id into rule name and qualifier value; nothing is checked against any rules. */
    public static GradeId parse(String gradeId) {
        int colon = gradeId.indexOf(QUALIFIER_SEPARATOR);
        return colon < 0 ? new GradeId(gradeId, Optional.empty())
                : new GradeId(gradeId.substring(0, colon), Optional.of(gradeId.substring(colon + 1)));
    }

    @Override
    public String toString() {
        return format(rule, qualifier.orElse(null));
    }
}
