package io.tally.rules.source;

import static io.tally.rules.source.SourceFixtures.FOREIGN_ORDER;
import static io.tally.rules.source.SourceFixtures.SALE;
import static io.tally.rules.source.SourceFixtures.consumed;
import static io.tally.rules.source.SourceFixtures.consumedOrder;
import static io.tally.rules.source.SourceFixtures.entities;
import static io.tally.rules.source.SourceFixtures.order;
import static io.tally.rules.source.SourceFixtures.record;
import static io.tally.rules.source.SourceFixtures.ruleFields;
import static io.tally.rules.source.SourceFixtures.sale;
import static io.tally.rules.source.SourceFixtures.saleSchema;
import static io.tally.rules.source.SourceFixtures.source;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.rules.GradeRules;
import io.tally.schemas.DeadLetters;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.avro.orders.OrderEvent;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class SourcePlanTest {
    /** 2026-11-27T08:15:30.123Z, the time of every fixture. */
    private static final long TIME_MS = 1_795_767_330_123L;

    private static SourceEvent readOk(SourcePlan plan, GenericRecord record) {
        assertThat(plan.problems()).isEmpty();
        SourcePlan.Read read = plan.read(record);
        assertThat(read.reason()).as(read.message()).isNull();
        return read.event();
    }

    private static void assertInvalid(SourcePlan plan, GenericRecord record, String message) {
        assertThat(plan.read(record)).isEqualTo(new SourcePlan.Read(null, DeadLetters.Reason.INVALID, message));
    }

    @Nested
    class AnOrderEvent {
        private static final SourceMapping ORDERS = source("""
                transaction-id: orderId
                event-time: placedAt
                domain: shop
                amount: {path: payment.amountCents, scale: 2}
                currency: payment.currency
                required: [customerId]
                fields: {customerId: customer.id, email: customer.email, postalCode: shipping.postalCode, sku: item.sku,
                         status: payment.status}""");
        private static final RuleFields RULES = ruleFields("""
                  - {name: spend, entity: customerId, qualifier: sku, filter: {field: status, in: [APPROVED]}, value: amount,
                     aggregations: [sum], units: [day], retention: P1D}
                  - {name: by-email, entity: email, value: one, aggregations: [count], units: [day], retention: P1D}
                  - {name: by-postal-code, entity: postalCode, value: one, aggregations: [count], units: [day], retention: P1D}
                  - {name: by-device, entity: attributes.device, value: one, aggregations: [count], units: [day], retention: P1D}""");
        private static final SourcePlan PLAN = SourcePlan.compile(ORDERS, RULES, FOREIGN_ORDER, 11);

        @Test
        void readsIntoTheEventTallyNeeds() {
            assertThat(RULES.names()).containsExactly("customerId", "sku", "status", "email", "postalCode", "attributes.device");
            SourceEvent e = readOk(PLAN, consumedOrder(o -> {}));
            assertThat(e).usingRecursiveComparison().isEqualTo(new SourceEvent("test", "o-1", TIME_MS, "shop-1", new BigDecimal("12.34"),
                    "EUR", new String[] {"c-1", "sku-9", "APPROVED", "a@example.com", "10115", "ios"}));
            assertThat(e.amount()).isEqualTo(new BigDecimal("12.34"));
            assertThat(e.dedupeKey()).isEqualTo("test:o-1");
        }

        @Test
        void absentOptionalValuesLeaveTheirSlotsEmpty() {
            SourceEvent e = readOk(PLAN, consumedOrder(o -> {
                o.getCustomer().setEmail(null);
                o.setShipping(null);
                o.setAttributes(Map.of());
            }));
            assertThat(e.field(RULES.slot("email"))).isNull();
            assertThat(e.field(RULES.slot("postalCode"))).isNull();
            assertThat(e.field(RULES.slot("attributes.device"))).isNull();
            assertThat(e.field(RULES.slot("customerId"))).isEqualTo("c-1");
        }

        @Test
        void aTimeWithAnotherOffsetIsTheSameInstant() {
            assertThat(readOk(PLAN, consumedOrder(o -> o.setPlacedAt("2026-11-27T10:15:30.123+02:00"))).eventTimeMs()).isEqualTo(TIME_MS);
        }

        @Test
        void readsAlikeWhenTheSchemaAsksForJavaStrings() {
            SourcePlan plan = SourcePlan.compile(ORDERS, RULES, OrderEvent.getClassSchema(), 12);
            assertThat(readOk(plan, consumed(order()))).usingRecursiveComparison().isEqualTo(readOk(PLAN, consumedOrder(o -> {})));
        }

        @Test
        void aRequiredNameIsReadWhereTheFieldsMapIt() {
            assertInvalid(PLAN, consumedOrder(o -> o.getCustomer().setId("")), "customerId is empty");
        }

        @Test
        void aBlankTransactionIdIsInvalid() {
            assertInvalid(PLAN, consumedOrder(o -> o.setOrderId(" ")), "orderId is empty");
        }

        @Test
        void aDomainHoldingThePartitionKeySeparatorIsInvalid() {
            assertInvalid(PLAN, consumedOrder(o -> o.setShop("a|b")), "shop contains '|', the partition-key separator");
        }

        @Test
        void anUnparseableTimeIsInvalidNamingThePath() {
            String why = " is not an ISO-8601 instant with an offset, such as 2026-11-27T08:15:30.123Z";
            assertInvalid(PLAN, consumedOrder(o -> o.setPlacedAt("yesterday")), "placedAt: 'yesterday'" + why);
            assertInvalid(PLAN, consumedOrder(o -> o.setPlacedAt("2026-11-27T08:15:30")), "placedAt: '2026-11-27T08:15:30'" + why);
        }
    }

    @Nested
    class ATransactionEventThroughTheShippedMapping {
        private static final SourceMapping DEFAULT = Sources.load(Sources.BUILTIN_DEFAULT).sources().get(0);
        private static final RuleFields RULES = RuleFields.of(GradeRules.load(GradeRules.BUILTIN_DEFAULT));
        private static final Schema V1 = TransactionEvent.getClassSchema();
        /** customerId renamed buyerId, the old name kept as an alias. */
        private static final Schema V2 = new Schema.Parser().parse(V1.toString()
                .replace("{\"name\":\"customerId\",", "{\"name\":\"buyerId\",\"aliases\":[\"customerId\"],"));
        /** customerId removed. */
        private static final Schema V3 = Schema.createRecord(V1.getName(), V1.getDoc(), V1.getNamespace(), false,
                V1.getFields().stream().filter(f -> !f.name().equals("customerId")).map(f -> new Schema.Field(f, f.schema())).toList());

        private static TransactionEvent transaction(String customerId) {
            return TransactionEvent.newBuilder().setTransactionId("t-1").setEventTime(Instant.ofEpochMilli(TIME_MS)).setDomain("eu")
                    .setCustomerId(customerId).setEmail(null).setPostalCode("10115").setSku("sku-9").setMerchant("m-1")
                    .setChannel("WEB").setAmount(new BigDecimal("12.3400")).setCurrency("USD").setStatus("APPROVED")
                    .setAttributes(Map.of()).build();
        }

        /** The transaction as a producer that moved to {@code writer} sends it. */
        private static GenericRecord sentAs(Schema writer) {
            return consumed(consumed(transaction("c-1"), V1, writer));
        }

        @Test
        void readsTheExactDecimalAndTheMillisecondTime() {
            SourceEvent e = readOk(SourcePlan.compile(DEFAULT, RULES, V1, 1), consumed(transaction("c-1")));
            assertThat(e.amount()).isEqualTo(new BigDecimal("12.3400"));
            assertThat(e.eventTimeMs()).isEqualTo(TIME_MS);
            assertThat(e.transactionId()).isEqualTo("t-1");
            assertThat(e.domain()).isEqualTo("eu");
            assertThat(e.currency()).isEqualTo("USD");
            assertThat(e.field(RULES.slot("customerId"))).isEqualTo("c-1");
            assertThat(e.field(RULES.slot("status"))).isEqualTo("APPROVED");
            assertThat(e.field(RULES.slot("email"))).isNull();
        }

        @Test
        void aBlankRequiredCustomerIdIsInvalid() {
            SourcePlan plan = SourcePlan.compile(DEFAULT, RULES, V1, 1);
            assertInvalid(plan, consumed(transaction(" ")), "customerId is empty");
            assertInvalid(plan, consumed(transaction("")), "customerId is empty");
        }

        @Test
        void aFieldRenamedWithItsOldNameAsAliasIsStillRead() {
            assertThat(V2.getField("customerId")).isNull();
            SourceEvent e = readOk(SourcePlan.compile(DEFAULT, RULES, V2, 2), sentAs(V2));
            assertThat(e.field(RULES.slot("customerId"))).isEqualTo("c-1");
        }

        @Test
        void aRemovedFieldNamesThePathAndSendsEveryEventToTheDlqNamingTheSchemaId() {
            SourcePlan plan = SourcePlan.compile(DEFAULT, RULES, V3, 3);
            String missing = "at 'customerId': record io.tally.schemas.avro.TransactionEvent has no field 'customerId'";
            assertThat(plan.problems()).hasSize(2).satisfiesExactly(
                    p -> assertThat(p).startsWith("required 'customerId' " + missing),
                    p -> assertThat(p).startsWith("'customerId' (entity of rule spend-per-customer, entity of rule spend-per-customer-sku) "
                            + missing));
            SourcePlan.Read read = plan.read(sentAs(V3));
            assertThat(read.reason()).isEqualTo(DeadLetters.Reason.SCHEMA_MISMATCH);
            assertThat(read.event()).isNull();
            assertThat(read.message()).startsWith("source transactions: writer schema id 3 (io.tally.schemas.avro.TransactionEvent) "
                    + "cannot serve the mapping and rules: required 'customerId' " + missing);
        }
    }

    /** Types that cannot serve their use, refused once per schema, and values refused per event, on {@link SourceFixtures#SALE}. */
    @Nested
    class ASale {
        private static final String BASE = "transaction-id: id\nevent-time: ms\ndomain: shop\namount: {path: cents, scale: 2}\n";

        /** {@code keys} and rules keyed by {@code entities} compiled against a sale; a rule set is never empty, so buyerId by default. */
        private static SourcePlan plan(String keys, String... entities) {
            return SourcePlan.compile(source(keys), entities(entities.length == 0 ? new String[] {"buyerId"} : entities), SALE, 5);
        }

        private static List<String> problems(String keys, String... entities) {
            return plan(keys, entities).problems();
        }

        @Test
        void theBaseMappingReadsASale() {
            SourceEvent e = readOk(plan(BASE), sale());
            assertThat(e).usingRecursiveComparison().isEqualTo(
                    new SourceEvent("test", "s-1", TIME_MS, "eu", new BigDecimal("12.34"), null, new String[] {"c-1"}));
        }

        @Test
        void aRecordIsNoKey() {
            assertThat(problems(BASE, "customer")).containsExactly(
                    "'customer' (entity of rule r0) at 'customer': it is a record t.Customer, not a string, enum, int, long or boolean");
        }

        @Test
        void aWholeNumberAmountNeedsItsScaleSaid() {
            assertThat(problems(BASE.replace("{path: cents, scale: 2}", "cents"))).containsExactly("amount at 'cents': it is a long "
                    + "of minor units: say how many, as amount: {path: cents, scale: 2} for cents (scale: 0 for whole units)");
            assertThat(readOk(plan(BASE.replace("{path: cents, scale: 2}", "{path: cents, scale: 0}")), sale()).amount())
                    .isEqualTo(new BigDecimal("1234"));
        }

        @Test
        void aDoubleAmountIsRefusedUnlessAllowed() {
            assertThat(problems(BASE.replace("{path: cents, scale: 2}", "price"))).containsExactly("amount at 'price': it is a double, "
                    + "which does not hold amounts exactly; use a decimal or a long of minor units, or accept it with amount.double: allow");
            assertThat(readOk(plan(BASE.replace("{path: cents, scale: 2}", "{path: price, double: allow}")), sale()).amount())
                    .isEqualTo(new BigDecimal("12.34"));
        }

        @Test
        void anAllowedFloatAmountIsTheDecimalItPrintsAs() {
            assertThat(readOk(plan(BASE.replace("{path: cents, scale: 2}", "{path: ratio, double: allow}")), sale()).amount())
                    .isEqualTo(new BigDecimal("0.1"));
        }

        @Test
        void aDoubleThatIsNoNumberIsInvalid() {
            assertInvalid(plan(BASE.replace("{path: cents, scale: 2}", "{path: price, double: allow}")), sale("price", Double.NaN),
                    "price NaN is not an amount: not a finite number");
        }

        @Test
        void anIntIsNoEventTime() {
            assertThat(problems(BASE.replace("event-time: ms", "event-time: count"))).singleElement().asString()
                    .startsWith("event-time at 'count': it is a")
                    .endsWith("int, not a timestamp-millis or timestamp-micros long or an ISO-8601 string");
        }

        @Test
        void aDecimalCarriesItsOwnScale() {
            assertThat(problems(BASE.replace("{path: cents, scale: 2}", "{path: dec, scale: 2}")))
                    .containsExactly("amount at 'dec': it is a decimal with its own scale 2; remove amount.scale");
            assertThat(readOk(plan(BASE.replace("{path: cents, scale: 2}", "dec")), sale()).amount()).isEqualTo(new BigDecimal("12.34"));
        }

        @Test
        void anArrayOnThePathIsRefused() {
            assertThat(problems(BASE, "lines.sku"))
                    .containsExactly("'lines.sku' (entity of rule r0) at 'lines.sku': 'lines' is an array; a path must lead to one value per event");
        }

        @Test
        void aUnionOfRecordsNeedsTheBranchNamed() {
            assertThat(problems(BASE, "payment.last4")).containsExactly("'payment.last4' (entity of rule r0) at 'payment.last4': "
                    + "'payment' is a union of [Card, Cash]; name the branch to follow (for example payment.Card)");
            SourcePlan plan = plan(BASE, "payment.Card.last4");
            assertThat(readOk(plan, sale()).field(0)).isEqualTo("4242");
            assertThat(readOk(plan, sale("payment", record(saleSchema("payment", 2), "till", "t-3"))).field(0)).isNull();
        }

        @Test
        void everyProblemOfASchemaIsNamedAtOnce() {
            assertThat(problems("transaction-id: customer\nevent-time: count\ndomain: nope\namount: price\ncurrency: lines\n"
                    + "required: [attrs]\n", "buyerId", "payment"))
                    .extracting(p -> p.substring(0, p.indexOf(':')))
                    .containsExactly("transaction-id at 'customer'", "domain at 'nope'", "event-time at 'count'", "amount at 'price'",
                            "currency at 'lines'", "required 'attrs' at 'attrs'", "'payment' (entity of rule r1) at 'payment'");
        }

        @Test
        void aMissingAmountIsInvalid() {
            assertInvalid(plan(BASE), sale("cents", null), "cents is missing");
        }

        @Test
        void aMissingRequiredValueIsInvalid() {
            assertInvalid(plan(BASE + "required: [attrs.browser]"), sale(), "attrs.browser is empty");
        }

        @Test
        void aBlankDomainIsInvalid() {
            assertInvalid(plan(BASE), sale("shop", ""), "shop is empty");
        }

        @Test
        void timestampMicrosBecomeMillisRoundedToTheEarlierMilli() {
            SourcePlan plan = plan(BASE.replace("event-time: ms", "event-time: us"));
            assertThat(readOk(plan, sale()).eventTimeMs()).isEqualTo(TIME_MS);
            assertThat(readOk(plan, sale("us", -1L)).eventTimeMs()).isEqualTo(-1L);
        }

        @Test
        void anIsoStringTimeIsExact() {
            assertThat(readOk(plan(BASE.replace("event-time: ms", "event-time: at")), sale()).eventTimeMs()).isEqualTo(TIME_MS);
        }

        @Test
        void aConstantDomainAndNoAmount() {
            SourceEvent e = readOk(plan(BASE.replace("domain: shop", "domain-constant: web").replace("amount: {path: cents, scale: 2}", "amount: ~")),
                    sale("cents", null));
            assertThat(e.domain()).isEqualTo("web");
            assertThat(e.amount()).isNull();
        }

        @Test
        void aNameMappedToNothingIsAbsentEvenWhenTheEventHasAFieldOfThatName() {
            SourcePlan plan = plan(BASE + "fields: {buyerId: ~}", "buyerId");
            assertThat(readOk(plan, sale()).field(0)).isNull();
        }

        @Test
        void aRequiredNameMappedToNothingCannotBeServed() {
            assertThat(problems(BASE + "required: [buyerId]\nfields: {buyerId: ~}")).containsExactly("required 'buyerId' is mapped to nothing in fields");
        }

        @Test
        void intsAndLongsAreKeysPrintedAsText() {
            SourceEvent e = readOk(plan(BASE, "count", "ms"), sale());
            assertThat(e.fields()).containsExactly("3", String.valueOf(TIME_MS));
        }

        @Test
        void anEmptyDecimalIsInvalid() {
            SourcePlan.Read read = plan(BASE.replace("{path: cents, scale: 2}", "dec")).read(sale("dec", ByteBuffer.allocate(0)));
            assertThat(read.reason()).isEqualTo(DeadLetters.Reason.INVALID);
            assertThat(read.message()).startsWith("dec is not an amount: ").doesNotContain("ByteBuffer");
        }
    }
}
