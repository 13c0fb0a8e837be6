package io.tally.rules.source;

import static io.tally.rules.source.SourceFixtures.FOREIGN_ORDER;
import static io.tally.rules.source.SourceFixtures.SALE;
import static io.tally.rules.source.SourceFixtures.consumed;
import static io.tally.rules.source.SourceFixtures.consumedOrder;
import static io.tally.rules.source.SourceFixtures.order;
import static io.tally.rules.source.SourceFixtures.record;
import static io.tally.rules.source.SourceFixtures.sale;
import static io.tally.rules.source.SourceFixtures.saleSchema;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.util.Utf8;
import org.junit.jupiter.api.Test;

class SchemaPathsTest {
    private static SchemaPaths.Resolved resolve(Schema schema, String path) throws SchemaPaths.Unresolved {
        return SchemaPaths.resolve(schema, FieldPath.parse(path));
    }

    private static Object read(String path, GenericRecord record) throws SchemaPaths.Unresolved {
        return resolve(record.getSchema(), path).accessor().raw(record);
    }

    @Test
    void nestedRecordFieldsAreFollowed() throws Exception {
        SchemaPaths.Resolved r = resolve(SALE, "customer.id");
        assertThat(r.leaf().getType()).isEqualTo(Schema.Type.STRING);
        assertThat(r.accessor().raw(sale())).isEqualTo(new Utf8("c-1"));
    }

    @Test
    void aFieldIsFoundByTheNameItHadBeforeARename() throws Exception {
        assertThat(read("customerId", sale("buyerId", "c-7"))).hasToString("c-7");
    }

    @Test
    void aMissingFieldIsNamedWithTheRecordAndItsFields() {
        assertThatThrownBy(() -> resolve(SALE, "customer.email")).isInstanceOf(SchemaPaths.Unresolved.class)
                .hasMessage("record t.Customer at 'customer' has no field 'email' (fields: [id])");
        assertThatThrownBy(() -> resolve(SALE, "email")).hasMessageStartingWith("record t.Sale has no field 'email' (fields: [id, at, ms,");
    }

    @Test
    void mapKeysAreSegmentsAndBracketedKeysMayHoldDots() throws Exception {
        GenericRecord sale = sale();
        assertThat(read("attrs.device", sale)).hasToString("ios");
        assertThat(read("attrs[device.id]", sale)).hasToString("d-9");
        assertThat(read("attrs.browser", sale)).isNull();
        assertThat(resolve(SALE, "attrs.device").leaf().getType()).isEqualTo(Schema.Type.STRING);
    }

    @Test
    void mapKeysAreFoundWhetherTheReaderGivesUtf8OrJavaStrings() throws Exception {
        // The generated classes' schema asks for java.lang.String (keys included); other producers' schemas do not.
        GenericRecord javaStrings = consumed(order());
        GenericRecord utf8 = consumedOrder(o -> {});
        assertThat(((Map<?, ?>) javaStrings.get("attributes")).keySet()).allMatch(k -> k instanceof String);
        assertThat(((Map<?, ?>) utf8.get("attributes")).keySet()).allMatch(k -> k instanceof Utf8);
        assertThat(read("attributes.device", javaStrings)).isEqualTo("ios");
        assertThat(read("attributes.device", utf8)).isEqualTo(new Utf8("ios"));
    }

    @Test
    void anOptionalValueIsPassedThroughAndReadsAsNullWhenAbsent() throws Exception {
        SchemaPaths.Resolved r = resolve(FOREIGN_ORDER, "shipping.postalCode");
        assertThat(r.leaf().getType()).isEqualTo(Schema.Type.STRING);
        assertThat(r.accessor().raw(consumedOrder(o -> {}))).hasToString("10115");
        assertThat(r.accessor().raw(consumedOrder(o -> o.getShipping().setPostalCode(null)))).isNull();
        assertThat(r.accessor().raw(consumedOrder(o -> o.setShipping(null)))).isNull();
        assertThat(resolve(SALE, "cents").leaf().getType()).isEqualTo(Schema.Type.LONG);
    }

    @Test
    void aBranchOfAUnionOfRecordsIsNamedByItsTypeAndOtherBranchesReadAsAbsent() throws Exception {
        SchemaPaths.Resolved card = resolve(SALE, "payment.Card.last4");
        assertThat(card.leaf().getType()).isEqualTo(Schema.Type.STRING);
        assertThat(card.accessor().raw(sale())).hasToString("4242");
        assertThat(card.accessor().raw(sale("payment", record(saleSchema("payment", 2), "till", "t-3")))).isNull();
        assertThat(card.accessor().raw(sale("payment", null))).isNull();
        assertThat(resolve(SALE, "payment[t.Card].last4").accessor().raw(sale())).hasToString("4242");
        assertThat(resolve(SALE, "payment.Cash.till").accessor().raw(sale("payment", record(saleSchema("payment", 2), "till", "t-3"))))
                .hasToString("t-3");
    }

    @Test
    void aUnionOfRecordsWithoutABranchNameIsRefusedSuggestingOne() {
        assertThatThrownBy(() -> resolve(SALE, "payment.last4"))
                .hasMessage("'payment' is a union of [Card, Cash]; name the branch to follow (for example payment.Card)");
    }

    @Test
    void anArrayOnThePathIsRefused() {
        assertThatThrownBy(() -> resolve(SALE, "lines.sku")).hasMessage("'lines' is an array; a path must lead to one value per event");
    }

    @Test
    void aPathCannotGoIntoAPlainValue() {
        assertThatThrownBy(() -> resolve(SALE, "customer.id.first")).hasMessage("'customer.id' is a string, which has no 'first' inside");
    }
}
