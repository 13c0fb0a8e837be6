package io.confluent.kafka.serializers.subject;

/**
 * Stands in for Confluent's class of this name, which is not on this classpath: a producer configured in code
 * passes the class object, and the serde must read it by its name without loading Confluent's jar.
 */
public final class TopicRecordNameStrategy {
    private TopicRecordNameStrategy() {}
}
