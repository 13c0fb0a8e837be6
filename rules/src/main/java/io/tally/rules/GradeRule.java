package io.tally.rules;

import io.tally.model.GradeId;
import io.tally.model.TimeUnit;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One grade: which events count (filter), for which entity (and optional qualifier), what value they
 * add, which aggregations are kept, in which time units, and for how long. Built only by
 * {@link GradeRules#load}, which validates every field.
 *
 * @param entityField    event field whose value is the entity key (Cosmos pk = {@code domain|value})
 * @param qualifierField event field kept as a sub-key inside the entity's partition (grade id {@code name:value})
 * @param retention      document ttl, and the oldest event time this grade still counts
 */
public record GradeRule(String name, String entityField, Optional<String> qualifierField, Optional<Filter> filter,
                        ValueSource value, Set<Aggregation> aggregations, List<TimeUnit> units, Duration retention) {

    /** Only events whose field equals one of the values count. */
    public record Filter(String field, Set<String> in) {}

    public enum ValueSource { AMOUNT, ONE }

    public enum Aggregation { SUM, COUNT, MIN, MAX }

    public GradeRule {
        aggregations = Set.copyOf(aggregations);
        units = List.copyOf(units);
    }

    /** The grade of this rule's documents ({@link GradeId}): the name, or {@code name:qualifierValue} for a qualified rule. */
    public String gradeId(String qualifierValue) {
        return GradeId.format(name, qualifierValue);
    }

    /** Whether the rule keeps its buckets per qualifier value. */
    public boolean qualified() {
        return qualifierField.isPresent();
    }

    public int ttlSeconds() {
        return (int) Math.min(Integer.MAX_VALUE, retention.toSeconds());
    }
}
