package io.tally.rules;

import io.tally.model.TimeUnit;
import java.util.Objects;

/**
 * One grade (a rule in one of its units) and the version of its definition ({@link RuleVersions}): two grades of the
 * same rule and unit with different versions count different things, and their buckets must never be merged.
 */
public record GradeVersion(String rule, TimeUnit unit, String version) {
    public GradeVersion {
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(version, "version");
    }

    /** {@code rule/unit}, how plans and messages name a grade. */
    public String grade() {
        return rule + "/" + unit.code();
    }
}
