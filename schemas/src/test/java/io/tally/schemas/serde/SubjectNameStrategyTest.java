package io.tally.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.avro.TransactionEvent;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

/**
 * Which subject the serializer asks the registry about under each strategy. The registry here is a
 * {@link RegistryFaultStub} answering "subject not found" to everything: the request path it records is the
 * subject; that a real registry then files the schema there is tested in tests/…/serde/SubjectNameStrategyIT.
 */
class SubjectNameStrategyTest {
    private static final String EVENT = "io.tally.schemas.avro.TransactionEvent";

    @Test
    void parsesShortNamesAndConfluentsClassNames() {
        assertThat(SubjectNameStrategy.parse("record-name")).isEqualTo(SubjectNameStrategy.RECORD_NAME);
        assertThat(SubjectNameStrategy.parse("TOPIC_RECORD_NAME")).isEqualTo(SubjectNameStrategy.TOPIC_RECORD_NAME);
        assertThat(SubjectNameStrategy.parse("io.confluent.kafka.serializers.subject.TopicNameStrategy"))
                .isEqualTo(SubjectNameStrategy.TOPIC_NAME);
        assertThat(SubjectNameStrategy.parse("TopicRecordNameStrategy")).isEqualTo(SubjectNameStrategy.TOPIC_RECORD_NAME);
        for (SubjectNameStrategy s : SubjectNameStrategy.values()) {
            assertThat(SubjectNameStrategy.parse(s.shortName())).isEqualTo(s);
            assertThat(SubjectNameStrategy.parse(s.confluentClass())).isEqualTo(s);
        }
        assertThatThrownBy(() -> SubjectNameStrategy.parse("io.other.RecordNameStrategy"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("record-name");
        assertThatThrownBy(() -> SubjectNameStrategy.parse(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void subjectsOfEachStrategy() {
        assertThat(SubjectNameStrategy.TOPIC_NAME.subject("tx", false, EVENT)).isEqualTo("tx-value");
        assertThat(SubjectNameStrategy.TOPIC_NAME.subject("tx", true, null)).isEqualTo("tx-key");
        assertThat(SubjectNameStrategy.RECORD_NAME.subject("tx", false, EVENT)).isEqualTo(EVENT);
        assertThat(SubjectNameStrategy.RECORD_NAME.subject("tx", true, EVENT)).isEqualTo(EVENT);
        assertThat(SubjectNameStrategy.TOPIC_RECORD_NAME.subject("tx", false, EVENT)).isEqualTo("tx-" + EVENT);
        assertThat(SubjectNameStrategy.TOPIC_RECORD_NAME.subject("tx", true, EVENT)).isEqualTo("tx-" + EVENT);
        assertThatThrownBy(() -> SubjectNameStrategy.RECORD_NAME.subject("tx", false, null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void registersUnderTheConfiguredStrategysSubject() {
        assertThat(subjectAsked(Map.of(), false)).isEqualTo("/subjects/tx-value/versions");
        assertThat(subjectAsked(Map.of(), true)).isEqualTo("/subjects/tx-key/versions");
        assertThat(subjectAsked(Map.of(AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "record-name"), false))
                .isEqualTo("/subjects/" + EVENT + "/versions");
        assertThat(subjectAsked(Map.of(AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY,
                "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"), false))
                .isEqualTo("/subjects/tx-" + EVENT + "/versions");
        // Key and value strategies are separate settings: a key serializer ignores the value's.
        assertThat(subjectAsked(Map.of(AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "record-name"), true))
                .isEqualTo("/subjects/tx-key/versions");
        assertThat(subjectAsked(Map.of(AvroSerdeConfig.KEY_SUBJECT_NAME_STRATEGY, "topic-record-name"), true))
                .isEqualTo("/subjects/tx-" + EVENT + "/versions");
    }

    @Test
    void looksUpAndUsesTheLatestUnderTheConfiguredStrategysSubject() {
        Map<String, Object> lookup = Map.of(AvroSerdeConfig.AUTO_REGISTER_SCHEMAS, false,
                AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "record-name");
        assertThat(subjectAsked(lookup, false)).isEqualTo("/subjects/" + EVENT);
        Map<String, Object> latest = Map.of(AvroSerdeConfig.AUTO_REGISTER_SCHEMAS, false,
                AvroSerdeConfig.USE_LATEST_VERSION, true,
                AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "topic-record-name");
        assertThat(subjectAsked(latest, false)).isEqualTo("/subjects/tx-" + EVENT + "/versions/latest");
    }

    @Test
    void recordNameStrategiesRefuseSchemasThatAreNotRecords() {
        Schema colours = Schema.createEnum("Colour", null, "io.tally.test", List.of("RED", "GREEN"));
        GenericData.EnumSymbol red = new GenericData.EnumSymbol(colours, "RED");
        try (RegistryFaultStub stub = notFound()) {
            AvroSerializer<GenericData.EnumSymbol> serializer = new AvroSerializer<>(client(stub));
            serializer.configure(Map.of(AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "RecordNameStrategy"), false);
            assertThatThrownBy(() -> serializer.serialize("colours", red))
                    .isExactlyInstanceOf(SerializationException.class)
                    .hasMessageContaining("value.subject.name.strategy = record-name")
                    .hasMessageContaining("must be an Avro record")
                    .hasMessageContaining("topic colours got a schema of type enum (io.tally.test.Colour)");
            assertThat(stub.seen()).isEmpty();

            // The topic's own subject needs no name, so the same value is fine under TopicNameStrategy.
            AvroSerializer<GenericData.EnumSymbol> byTopic = new AvroSerializer<>(client(stub));
            assertThatThrownBy(() -> byTopic.serialize("colours", red)).isInstanceOf(SchemaRegistryException.class);
            assertThat(stub.seen()).extracting(RegistryFaultStub.Seen::path).containsExactly("/subjects/colours-value/versions");
        }
    }

    @Test
    void genericRecordsAreNamedByTheirSchema() {
        Schema probe = Schema.createRecord("Probe", null, "io.tally.test", false,
                List.of(new Schema.Field("id", Schema.create(Schema.Type.STRING))));
        GenericRecord record = new GenericData.Record(probe);
        record.put("id", "p-1");
        try (RegistryFaultStub stub = notFound()) {
            AvroSerializer<GenericRecord> serializer = new AvroSerializer<>(client(stub));
            serializer.configure(Map.of(AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "topic-record-name"), false);
            assertThatThrownBy(() -> serializer.serialize("probes", record))
                    .isInstanceOf(SchemaRegistryException.class)
                    .hasMessageContaining("(subject probes-io.tally.test.Probe)");
        }
    }

    /** The path of the one request a serializer so configured makes for a TransactionEvent on topic tx. */
    private static String subjectAsked(Map<String, Object> settings, boolean isKey) {
        try (RegistryFaultStub stub = notFound()) {
            AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>(client(stub));
            serializer.configure(new HashMap<>(settings), isKey);
            assertThatThrownBy(() -> serializer.serialize("tx", SampleEvents.v1()))
                    .isInstanceOf(SchemaRegistryException.class);
            assertThat(stub.seen()).hasSize(1);
            return stub.seen().get(0).path();
        }
    }

    private static RegistryFaultStub notFound() {
        return RegistryFaultStub.answering(404, "application/json",
                "{\"error_code\":40401,\"message\":\"Subject not found.\"}");
    }

    private static SchemaRegistryClient client(RegistryFaultStub stub) {
        return new SchemaRegistryClient(RegistryClientSettings.forUrls(stub.url()).withRetry(RetryPolicy.NONE));
    }
}
