package io.tally.loadgen;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Encodes records before they reach the producer, so valid events and deliberately broken bytes travel
 * through the same {@code KafkaSender<String, byte[]>} and the same result checks. Valid events get the
 * Confluent wire format (registering the schema on first use); MALFORMED ones get that encoding
 * corrupted by {@link Malformer}.
 *
 * <p>Called from one thread (the pacer's). A registry failure is thrown from {@link #apply} and ends the
 * run: nothing can be produced without a schema id.
 */
public final class RecordEncoder implements UnaryOperator<OutgoingRecord> {
    private final AvroSerializer<TransactionEvent> serializer;
    private final String topic;

    public RecordEncoder(SchemaRegistryClient registry, String topic) {
        this.serializer = new AvroSerializer<>(registry);
        this.serializer.configure(Map.of(), false);
        this.topic = topic;
    }

    @Override
    public OutgoingRecord apply(OutgoingRecord r) {
        byte[] wire = serializer.serialize(topic, r.event());
        return r.withValue(r.kind() == RecordKind.MALFORMED ? Malformer.apply(r.malformation(), wire) : wire);
    }
}
