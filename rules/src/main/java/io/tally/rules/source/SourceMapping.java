package io.tally.rules.source;

import io.tally.schemas.serde.SubjectNameStrategy;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One source of events: which topics, how their schemas are registered, and where in each event the values Tally
 * needs sit. Built only by {@link Sources#parse}, which validates it.
 *
 * @param topics          topic names within the deployment ({@code topics.prefix} goes in front); empty when
 *                        {@code topicPattern} is set
 * @param topicPattern    every topic whose name (after the prefix) matches, including topics created later
 * @param recordName      the record's full name, for the record-name strategies' subjects
 * @param domain          where the domain is, or empty when {@code domainConstant} gives it
 * @param amount          how the amount is read; empty: this source has none, and rules summing amounts skip its events
 * @param currency        where the ISO 4217 currency code is, when the source has one (checked, not converted)
 * @param required        names (or paths) that must hold a non-empty value, or the event goes to the DLQ as INVALID
 * @param fields          the names rules use, mapped to this source's paths; a name mapped to nothing ({@code ~})
 *                        is absent from this source: rules over it never count its events
 */
public record SourceMapping(String name, List<String> topics, Optional<Pattern> topicPattern,
                            SubjectNameStrategy subjectStrategy, Optional<String> recordName,
                            FieldPath transactionId, FieldPath eventTime, Optional<FieldPath> domain,
                            Optional<String> domainConstant, Optional<Amount> amount, Optional<FieldPath> currency,
                            List<String> required, Map<String, Optional<FieldPath>> fields) {

    /**
     * How the amount is read: a {@code decimal} exactly (its schema has the scale); an {@code int}/{@code long} as a
     * whole number of {@code 10^-scale} units (cents: scale 2), the scale given outright, since 1234 is 1,234 or 12.34
     * by convention only; a {@code float}/{@code double} only when allowed, since it is not exact.
     *
     * @param scale null when the mapping gives none
     */
    public record Amount(FieldPath path, Integer scale, boolean allowDouble) {}

    public SourceMapping {
        topics = List.copyOf(topics);
        required = List.copyOf(required);
        fields = Map.copyOf(fields);
    }

    /** Whether this source reads {@code topic}, named within the deployment (without the prefix). */
    public boolean reads(String topic) {
        return topicPattern.map(p -> p.matcher(topic).matches()).orElseGet(() -> topics.contains(topic));
    }

    /**
     * Where a name a rule uses sits in this source's events: its mapping in {@code fields}, else the name read as a
     * path. Empty when the source maps it to nothing.
     */
    public Optional<FieldPath> pathOf(String name) {
        Optional<FieldPath> mapped = fields.get(name);
        if (mapped != null) return mapped;
        return Optional.of(FieldPath.parse(name));
    }

    /** Where it is described, for messages. */
    public String describeTopics() {
        return topicPattern.map(p -> "topics matching " + p.pattern()).orElseGet(() -> "topic" + (topics.size() == 1 ? " " : "s ")
                + String.join(", ", topics));
    }
}
