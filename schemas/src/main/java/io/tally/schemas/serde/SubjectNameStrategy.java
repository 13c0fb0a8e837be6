package io.tally.schemas.serde;

import java.util.Locale;

/**
 * The registry subject a schema is filed under, as Confluent's clients choose it ({@code key.subject.name.strategy} /
 * {@code value.subject.name.strategy}): per topic, per record name, or per topic and record name. Accepts Tally's
 * short names and Confluent's class names, so a producer's configuration can be copied as it is.
 */
public enum SubjectNameStrategy {
    /** {@code <topic>-key} / {@code <topic>-value}: one schema lineage per topic (Confluent's default). */
    TOPIC_NAME("topic-name", "io.confluent.kafka.serializers.subject.TopicNameStrategy"),
    /** {@code <record full name>}: one lineage per record type, shared by every topic that carries it. */
    RECORD_NAME("record-name", "io.confluent.kafka.serializers.subject.RecordNameStrategy"),
    /** {@code <topic>-<record full name>}: several record types on one topic, one lineage each. */
    TOPIC_RECORD_NAME("topic-record-name", "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy");

    private final String shortName;
    private final String confluentClass;

    SubjectNameStrategy(String shortName, String confluentClass) {
        this.shortName = shortName;
        this.confluentClass = confluentClass;
    }

    public String shortName() {
        return shortName;
    }

    public String confluentClass() {
        return confluentClass;
    }

    /** Whether the subject depends on the record's name (which must then be known). */
    public boolean usesRecordName() {
        return this != TOPIC_NAME;
    }

    /**
     * The subject of a value or key of {@code recordFullName} written to {@code topic} (the record name may be null
     * for {@link #TOPIC_NAME}).
     */
    public String subject(String topic, boolean isKey, String recordFullName) {
        return switch (this) {
            case TOPIC_NAME -> topic + (isKey ? "-key" : "-value");
            case RECORD_NAME -> requireName(recordFullName);
            case TOPIC_RECORD_NAME -> topic + "-" + requireName(recordFullName);
        };
    }

    private String requireName(String recordFullName) {
        if (recordFullName == null || recordFullName.isBlank()) {
            throw new IllegalArgumentException(shortName + " needs the record's full name");
        }
        return recordFullName;
    }

    /**
     * {@code topic-name}, {@code record-name}, {@code topic-record-name}, or Confluent's class name (full or simple,
     * for example {@code io.confluent.kafka.serializers.subject.RecordNameStrategy} or {@code RecordNameStrategy}).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static SubjectNameStrategy parse(String value) {
        String v = value == null ? "" : value.strip();
        for (SubjectNameStrategy s : values()) {
            if (v.equalsIgnoreCase(s.shortName) || v.equals(s.confluentClass)
                    || v.equals(s.confluentClass.substring(s.confluentClass.lastIndexOf('.') + 1))
                    || v.toUpperCase(Locale.ROOT).replace('-', '_').equals(s.name())) {
                return s;
            }
        }
        throw new IllegalArgumentException("'" + value + "' is not a subject name strategy: use topic-name, record-name or "
                + "topic-record-name (or Confluent's TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy)");
    }
}
