package io.tally.loadgen.rules;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One grade rule as read from the rules file (see the header of rules/default-rules.yaml).
 *
 * @param name         grade name; with a qualifier the grade id is {@code name:qualifierValue}
 * @param entity       event field whose value is the entity key (pk = {@code domain|value})
 * @param qualifier    optional second field: separate buckets per value inside the entity's partition
 * @param filter       optional: only events whose field value is in the list count
 * @param value        what is aggregated
 * @param aggregations which of sum, count, min, max the bucket documents carry
 * @param units        bucket widths
 * @param retention    bucket lifetime and how late an event may arrive for this rule
 */
public record Rule(String name, String entity, Optional<String> qualifier, Optional<Filter> filter, Value value,
                   Set<Aggregation> aggregations, List<TimeUnit> units, Duration retention) {

    /** {@code field in values}. */
    public record Filter(String field, Set<String> values) {}

    /** The event's amount, or 1 per event. */
    public enum Value { AMOUNT, ONE }

    public enum Aggregation { SUM, COUNT, MIN, MAX }
}
