package io.tally.rules.source;

import io.tally.rules.GradeRules;
import io.tally.schemas.avro.orders.Address;
import io.tally.schemas.avro.orders.Customer;
import io.tally.schemas.avro.orders.Item;
import io.tally.schemas.avro.orders.OrderEvent;
import io.tally.schemas.avro.orders.Payment;
import io.tally.schemas.avro.orders.PaymentStatus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;

/** Mappings, rules and records as the sources tests need them. */
final class SourceFixtures {
    /** A record with a value of every kind a path can meet, each field named for what it tests. */
    static final Schema SALE = new Schema.Parser().parse("""
            {"type": "record", "name": "Sale", "namespace": "t", "fields": [
              {"name": "id", "type": "string"},
              {"name": "at", "type": "string"},
              {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
              {"name": "us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
              {"name": "count", "type": "int"},
              {"name": "shop", "type": "string"},
              {"name": "cents", "type": ["null", "long"], "default": null},
              {"name": "price", "type": "double"},
              {"name": "ratio", "type": "float"},
              {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
              {"name": "buyerId", "type": "string", "aliases": ["customerId"]},
              {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [{"name": "id", "type": "string"}]}},
              {"name": "lines", "type": {"type": "array", "items":
                {"type": "record", "name": "Line", "fields": [{"name": "sku", "type": "string"}]}}},
              {"name": "payment", "type": ["null",
                {"type": "record", "name": "Card", "fields": [{"name": "last4", "type": "string"}]},
                {"type": "record", "name": "Cash", "fields": [{"name": "till", "type": "string"}]}], "default": null},
              {"name": "attrs", "type": {"type": "map", "values": "string"}}
            ]}""");

    /** OrderEvent as a producer without Avro's Java string option registers it. */
    static final Schema FOREIGN_ORDER = withoutJavaStrings(OrderEvent.getClassSchema());

    private SourceFixtures() {}

    /** The schema of {@link #SALE}'s {@code field}, or of its {@code branch}th type when it is a union and branch >= 0. */
    static Schema saleSchema(String field, int branch) {
        Schema s = SALE.getField(field).schema();
        return branch < 0 ? s : s.getTypes().get(branch);
    }

    /** A record of {@code schema} with {@code keyValues} (name, value, name, value...). */
    static GenericData.Record record(Schema schema, Object... keyValues) {
        GenericData.Record r = new GenericData.Record(schema);
        for (int i = 0; i < keyValues.length; i += 2) r.put((String) keyValues[i], keyValues[i + 1]);
        return r;
    }

    /**
     * A {@link #SALE} as a consumer sees it: a valid sale (id s-1, at and ms 2026-11-27T08:15:30.123Z, shop eu, 1234
     * cents, price 12.34, dec 12.34, buyer and customer c-1, a card payment ending 4242, attrs device and device.id)
     * with {@code overrides} (name, value...) applied.
     */
    static GenericRecord sale(Object... overrides) {
        GenericData.Record r = record(SALE, "id", "s-1", "at", "2026-11-27T08:15:30.123Z", "ms", 1_795_767_330_123L,
                "us", 1_795_767_330_123_456L, "count", 3, "shop", "eu", "cents", 1234L, "price", 12.34, "ratio", 0.1f,
                "dec", ByteBuffer.wrap(BigInteger.valueOf(1234).toByteArray()), "buyerId", "c-1",
                "customer", record(saleSchema("customer", -1), "id", "c-1"),
                "lines", List.of(record(saleSchema("lines", -1).getElementType(), "sku", "k-1")),
                "payment", record(saleSchema("payment", 1), "last4", "4242"),
                "attrs", Map.of("device", "ios", "device.id", "d-9"));
        for (int i = 0; i < overrides.length; i += 2) r.put((String) overrides[i], overrides[i + 1]);
        return consumed(r);
    }

    /** One source on topic {@code t}, named {@code test}, with {@code keys} (YAML lines of the source entry). */
    static SourceMapping source(String keys) {
        String body = keys.lines().map(l -> "    " + l).collect(Collectors.joining("\n"));
        return Sources.parse("sources:\n  - name: test\n    topics: [t]\n" + body + "\n", "test.yaml").sources().get(0);
    }

    /** The fields of one rule per name, each counting events (value: one) with the name as entity. */
    static RuleFields entities(String... names) {
        return ruleFields(IntStream.range(0, names.length).mapToObj(i -> "  - {name: r" + i + ", entity: '" + names[i]
                + "', value: one, aggregations: [count], units: [day], retention: P1D}").collect(Collectors.joining("\n")));
    }

    /** The fields of {@code rules}, the YAML list entries under {@code rules:}. */
    static RuleFields ruleFields(String rules) {
        return RuleFields.of(GradeRules.parse("rules:\n" + rules + "\n", "rules.yaml"));
    }

    /**
     * {@code datum} as a consumer sees it when the producer registered {@code writer}: written with it and read back
     * by Avro's generic reader with {@code reader}, so strings are {@code Utf8} (unless the schema asks for Java
     * strings), decimals {@code ByteBuffer}s, timestamps {@code Long}s and enums {@code EnumSymbol}s.
     */
    static GenericRecord consumed(IndexedRecord datum, Schema writer, Schema reader) {
        // Generated classes need their own model for their logical-type conversions; generic records need none.
        DatumWriter<Object> w = datum instanceof SpecificRecord ? new SpecificDatumWriter<>(writer) : new GenericDatumWriter<>(writer);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
            w.write(datum, encoder);
            encoder.flush();
            return new GenericDatumReader<GenericRecord>(writer, reader).read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static GenericRecord consumed(IndexedRecord datum) {
        return consumed(datum, datum.getSchema(), datum.getSchema());
    }

    /**
     * A valid order: o-1 placed 2026-11-27T08:15:30.123Z at shop-1 by c-1 (a@example.com), shipped to 10115, sku-9
     * from m-1, 1234 cents EUR approved on WEB, attributes device=ios and device.id=d-9.
     */
    static OrderEvent order() {
        return OrderEvent.newBuilder().setOrderId("o-1").setPlacedAt("2026-11-27T08:15:30.123Z").setShop("shop-1")
                .setCustomer(Customer.newBuilder().setId("c-1").setEmail("a@example.com").build())
                .setShipping(Address.newBuilder().setPostalCode("10115").setCountry("DE").build())
                .setItem(Item.newBuilder().setSku("sku-9").setMerchant("m-1").build())
                .setPayment(Payment.newBuilder().setAmountCents(1234).setCurrency("EUR").setStatus(PaymentStatus.APPROVED)
                        .setChannel("WEB").build())
                .setAttributes(Map.of("device", "ios", "device.id", "d-9"))
                .build();
    }

    /** {@link #order()} with {@code change}, as a consumer sees it when a producer without Java strings sent it. */
    static GenericRecord consumedOrder(Consumer<OrderEvent> change) {
        OrderEvent o = order();
        change.accept(o);
        return consumed(o, FOREIGN_ORDER, FOREIGN_ORDER);
    }

    /**
     * A generated class's schema as a producer without Avro's Java string option registers it: the generated
     * classes ask for {@code java.lang.String}, other producers' schemas do not, and their readers give {@code Utf8}.
     */
    static Schema withoutJavaStrings(Schema schema) {
        return new Schema.Parser().parse(schema.toString().replace(",\"avro.java.string\":\"String\"", ""));
    }
}
