package io.tally.loadgen;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * Encodes records before they reach the producer, so valid events and deliberately broken bytes travel
 * through the same {@code KafkaSender<String, byte[]>} and the same result checks. Valid events get the
 * Confluent wire format (registering the schema on first use); MALFORMED ones get that encoding
 * corrupted by {@link Malformer}.
 *
 * <p>From sequence {@code firstV2Sequence} on, events are written with schema version 2 (the v1 fields
 * plus {@code deviceId} and {@code loyaltyTier}, derived from the customer so a run stays reproducible):
 * a producer upgraded mid-stream. Readers of version 1 resolve both, and nothing that counts differs.
 *
 * <p>Records for {@link Destination#ORDERS} are written as {@code OrderEvent} ({@link OrderEvents}) to the
 * orders topic, so the schema is registered under that topic's subject ({@code <orders topic>-value}); they
 * have one schema version only, and MALFORMED ones are corrupted the same ways.
 *
 * <p>Called from one thread (the pacer's). A registry failure is thrown from {@link #apply} and ends the
 * run: nothing can be produced without a schema id.
 */
public final class RecordEncoder implements UnaryOperator<OutgoingRecord> {
    /** Schema version 2, shipped as a resource of the schemas module. */
    static final String V2_RESOURCE = "/avro-v2/TransactionEvent.avsc";
    private static final String[] TIERS = {"NONE", "SILVER", "GOLD"};

    private final AvroSerializer<GenericContainer> serializer;
    private final String topic;
    private final String ordersTopic;
    private final long firstV2Sequence;
    private final Schema v2;

    /** Every record with schema version 1. */
    public RecordEncoder(SchemaRegistryClient registry, String topic) {
        this(registry, topic, Long.MAX_VALUE);
    }

    /** Without an orders topic: a record for {@link Destination#ORDERS} is an error. */
    public RecordEncoder(SchemaRegistryClient registry, String topic, long firstV2Sequence) {
        this(registry, topic, null, firstV2Sequence);
    }

    /** @param ordersTopic the topic of {@link Destination#ORDERS} records; null when there are none */
    public RecordEncoder(SchemaRegistryClient registry, String topic, String ordersTopic, long firstV2Sequence) {
        this.serializer = new AvroSerializer<>(registry);
        this.serializer.configure(Map.of(), false);
        this.topic = topic;
        this.ordersTopic = ordersTopic;
        this.firstV2Sequence = firstV2Sequence;
        this.v2 = firstV2Sequence == Long.MAX_VALUE ? null : loadV2();
    }

    @Override
    public OutgoingRecord apply(OutgoingRecord r) {
        byte[] wire = r.destination() == Destination.ORDERS ? encodeOrder(r) : encodeTransaction(r);
        return r.withValue(r.kind() == RecordKind.MALFORMED ? Malformer.apply(r.malformation(), wire) : wire);
    }

    private byte[] encodeTransaction(OutgoingRecord r) {
        GenericContainer value = r.sequence() >= firstV2Sequence ? asV2(r.event()) : r.event();
        return serializer.serialize(topic, value);
    }

    private byte[] encodeOrder(OutgoingRecord r) {
        if (ordersTopic == null) throw new IllegalStateException("record #" + r.sequence() + " is an order, and there is no orders topic");
        return serializer.serialize(ordersTopic, OrderEvents.toOrder(r.event()));
    }

    /** The event as a version-2 record: every v1 field unchanged, the two new ones from the customer id. */
    GenericRecord asV2(TransactionEvent e) {
        GenericRecord r = new GenericData.Record(v2);
        for (Schema.Field f : TransactionEvent.getClassSchema().getFields()) r.put(f.name(), e.get(f.name()));
        int h = Math.floorMod(e.getCustomerId().hashCode(), 1_000);
        r.put("deviceId", h % 10 == 0 ? null : "dev-" + h); // some devices unknown, as the schema allows
        r.put("loyaltyTier", TIERS[h % TIERS.length]);
        return r;
    }

    static Schema loadV2() {
        try (InputStream in = RecordEncoder.class.getResourceAsStream(V2_RESOURCE)) {
            if (in == null) throw new IllegalStateException(V2_RESOURCE + " is not on the classpath (schemas jar)");
            return new Schema.Parser().parse(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + V2_RESOURCE, e);
        }
    }
}
