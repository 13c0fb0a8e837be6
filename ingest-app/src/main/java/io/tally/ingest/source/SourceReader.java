package io.tally.ingest.source;

import io.tally.rules.source.RuleFields;
import io.tally.rules.source.SourceMapping;
import io.tally.rules.source.SourcePlan;
import io.tally.schemas.DeadLetters;
import io.tally.schemas.serde.WireFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.generic.IndexedRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stage 1's reading of any source's record: decode it with the writer schema its id names (whatever the subject
 * strategy that registered it), then read the mapped values through the plan compiled for that (source, schema id),
 * made when the id is first seen and kept. Decoding failures surface as the deserializer throws them
 * ({@link io.tally.schemas.serde.AvroDecodeException}), for {@link io.tally.ingest.topology.EventIntake} to judge.
 *
 * <p>Threads: one reader serves every stream thread; plans are immutable and cached in a concurrent map.
 */
public final class SourceReader {
    private static final Logger log = LoggerFactory.getLogger(SourceReader.class);

    /**
     * A source's plans by schema id, and the one used last: a topic's producers mostly write one schema at a time, so
     * the usual record finds its plan without a map lookup (or a boxed id).
     */
    private static final class Plans {
        final SourceMapping source;
        final Map<Integer, SourcePlan> byId = new ConcurrentHashMap<>();
        volatile SourcePlan last;

        Plans(SourceMapping source) {
            this.source = source;
        }
    }

    private final SourceTopics topics;
    private final RuleFields fields;
    private final Deserializer<?> avro;
    private final Map<String, Plans> bySource = new ConcurrentHashMap<>();
    private final Map<String, Optional<Plans>> byTopic = new ConcurrentHashMap<>();

    /**
     * @param avro decodes a Confluent-wire-format record with its writer schema into a generic record (production:
     *             {@code new AvroDeserializer<>(registry)}, {@link io.tally.ingest.topology.TallyTopology#eventDeserializer})
     */
    public SourceReader(SourceTopics topics, RuleFields fields, Deserializer<?> avro) {
        this.topics = topics;
        this.fields = fields;
        this.avro = avro;
    }

    public SourcePlan.Read read(String topic, byte[] value) {
        Plans plans = byTopic.computeIfAbsent(topic, t -> topics.sourceOf(t).map(s -> bySource.computeIfAbsent(s.name(), n -> new Plans(s))))
                .orElse(null);
        if (plans == null) {
            return new SourcePlan.Read(null, DeadLetters.Reason.DECODE_FAILED, "no source of the sources file reads topic " + topic);
        }
        int id = WireFormat.schemaId(value, topic);
        Object decoded = avro.deserialize(topic, value);
        if (!(decoded instanceof IndexedRecord record)) {
            return new SourcePlan.Read(null, DeadLetters.Reason.SCHEMA_MISMATCH, "source " + plans.source.name() + ": writer schema id " + id
                    + " is not a record but " + (decoded == null ? "null" : decoded.getClass().getSimpleName()));
        }
        SourcePlan plan = plans.last;
        if (plan == null || plan.schemaId() != id) {
            plan = plans.byId.computeIfAbsent(id, k -> compile(plans.source, record, id));
            plans.last = plan;
        }
        return plan.read(record);
    }

    private SourcePlan compile(SourceMapping source, IndexedRecord record, int id) {
        SourcePlan plan = SourcePlan.compile(source, fields, record.getSchema(), id);
        if (plan.problems().isEmpty()) {
            log.info("source {}: writer schema id {} ({}) read through the mapping", source.name(), id, record.getSchema().getFullName());
        } else {
            log.warn("source {}: writer schema id {} ({}) cannot serve the mapping and rules; its records go to the DLQ as {}: {}",
                    source.name(), id, record.getSchema().getFullName(), DeadLetters.Reason.SCHEMA_MISMATCH, plan.problems());
        }
        return plan;
    }
}
