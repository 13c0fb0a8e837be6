package io.tally.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.avro.orders.OrderEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The second schema: which records go out as orders, and that an order carries exactly the logical event
 * the ground truth counts. Fixed seeds throughout, as in {@link EventGeneratorTest}.
 */
class OrderStreamTest {
    static final String[] EVERY_KIND = {"--loadgen.events=20000", "--loadgen.seed=7", "--loadgen.duplicate.fraction=0.05",
            "--loadgen.late.fraction=0.02", "--loadgen.future.fraction=0.02", "--loadgen.malformed.fraction=0.02",
            "--loadgen.invalid.fraction=0.05"};

    static LoadgenSettings settings(String share, String... more) {
        List<String> flags = new java.util.ArrayList<>(List.of(EVERY_KIND));
        flags.add("--loadgen.orders.topic=orders");
        flags.add("--loadgen.orders.share=" + share);
        flags.addAll(List.of(more));
        return EventGeneratorTest.settings(flags.toArray(String[]::new));
    }

    @Test
    void theShareIsAFunctionOfTheSeedAndLeavesTheEventsAlone() {
        List<OutgoingRecord> none = EventGeneratorTest.generate(settings("0"));
        List<OutgoingRecord> some = EventGeneratorTest.generate(settings("0.3"));
        List<OutgoingRecord> again = EventGeneratorTest.generate(settings("0.3"));
        List<OutgoingRecord> otherSeed = EventGeneratorTest.generate(settings("0.3", "--loadgen.seed=8"));

        assertThat(none).allMatch(r -> r.destination() == Destination.TRANSACTIONS);
        assertThat(some).extracting(OutgoingRecord::destination).isEqualTo(again.stream().map(OutgoingRecord::destination).toList());
        assertThat(some).extracting(OutgoingRecord::destination)
                .isNotEqualTo(otherSeed.stream().map(OutgoingRecord::destination).toList());
        long orders = some.stream().filter(r -> r.destination() == Destination.ORDERS).count();
        assertThat(orders / (double) some.size()).isCloseTo(0.3, within(0.02));
        for (int i = 0; i < some.size(); i++) {
            OutgoingRecord a = none.get(i), b = some.get(i);
            assertThat(b.kind()).isEqualTo(a.kind());
            assertThat(b.malformation()).isEqualTo(a.malformation());
            // An invalid order may break its amount or currency where a transaction empties its customer id.
            if (b.kind() != RecordKind.INVALID || b.destination() == Destination.TRANSACTIONS) {
                assertThat(b.event()).as("record %d", i).isEqualTo(a.event());
            }
        }
    }

    @Test
    void everyKindReachesTheOrdersTopicWithItsMeaning() {
        List<OutgoingRecord> records = EventGeneratorTest.generate(settings("0.5"));
        Map<String, Destination> validById = new HashMap<>();
        Map<RecordKind, Integer> orderKinds = new java.util.EnumMap<>(RecordKind.class);
        Set<String> invalidOrderWays = new java.util.TreeSet<>();
        for (OutgoingRecord r : records) {
            TransactionEvent e = r.event();
            if (r.destination() == Destination.ORDERS) orderKinds.merge(r.kind(), 1, Integer::sum);
            switch (r.kind()) {
                case VALID -> validById.put(e.getTransactionId(), r.destination());
                case DUPLICATE -> {
                    assertThat(r.destination()).as("a duplicate goes where its original went").isEqualTo(validById.get(e.getTransactionId()));
                    assertThat(r.key()).isEqualTo(e.getCustomerId());
                }
                case INVALID -> {
                    if (r.destination() == Destination.ORDERS) {
                        assertThat(e.getCustomerId()).as("orders keep their customer id").isNotEmpty();
                        invalidOrderWays.add(e.getTransactionId().isEmpty() ? "orderId" : e.getDomain().isEmpty() ? "shop"
                                : e.getAmount().signum() < 0 ? "amount" : e.getCurrency().equals(EventGenerator.NOT_A_CURRENCY) ? "currency" : "none");
                    }
                }
                default -> { }
            }
        }
        assertThat(orderKinds.keySet()).containsExactlyInAnyOrder(RecordKind.VALID, RecordKind.DUPLICATE, RecordKind.LATE,
                RecordKind.FUTURE, RecordKind.MALFORMED, RecordKind.INVALID);
        assertThat(invalidOrderWays).containsExactlyInAnyOrder("orderId", "shop", "amount", "currency");
    }

    @Test
    void anOrderDecodesBackToTheSameEvent() throws Exception {
        List<OutgoingRecord> records = EventGeneratorTest.generate(settings("0.5", "--loadgen.events=3000"));
        try (RegistryStub registry = new RegistryStub()) {
            SchemaRegistryClient client = registry.client();
            RecordEncoder encoder = new RecordEncoder(client, "tx", "orders", Long.MAX_VALUE);
            AvroDeserializer<OrderEvent> orders = new AvroDeserializer<>(client, OrderEvent.getClassSchema());
            AvroDeserializer<TransactionEvent> transactions = new AvroDeserializer<>(client, TransactionEvent.getClassSchema());
            Map<String, byte[]> firstBytes = new HashMap<>();
            int decodedOrders = 0;
            for (OutgoingRecord r : records) {
                byte[] wire = encoder.apply(r).value();
                boolean order = r.destination() == Destination.ORDERS;
                if (r.kind() == RecordKind.MALFORMED) {
                    assertThatThrownBy(() -> (order ? orders : transactions).deserialize(order ? "orders" : "tx", wire))
                            .as("record %d (%s)", r.sequence(), r.malformation()).isInstanceOf(RuntimeException.class);
                    continue;
                }
                byte[] first = firstBytes.putIfAbsent(r.event().getTransactionId(), wire);
                if (r.kind() == RecordKind.DUPLICATE) assertThat(wire).as("a duplicate repeats its original's bytes").isEqualTo(first);
                if (!order) {
                    assertThat(transactions.deserialize("tx", wire)).isEqualTo(r.event());
                    continue;
                }
                OrderEvent o = orders.deserialize("orders", wire);
                decodedOrders++;
                assertThat(OrderEvents.toTransaction(o)).as("record %d", r.sequence()).isEqualTo(r.event());
                assertThat(Instant.from(DateTimeFormatter.ISO_OFFSET_DATE_TIME.parse(o.getPlacedAt()))).isEqualTo(r.event().getEventTime());
                assertThat(BigDecimal.valueOf(o.getPayment().getAmountCents(), 2)).isEqualByComparingTo(r.event().getAmount());
                assertThat(o.getShipping() == null).isEqualTo(r.event().getPostalCode() == null);
                assertThat(o.getCustomer().getEmail()).isEqualTo(r.event().getEmail());
            }
            assertThat(decodedOrders).isGreaterThan(1000);
            assertThat(registry.subjects()).containsExactlyInAnyOrder("tx-value", "orders-value");
        }
    }

    @Test
    void amountsAndTimesCrossExactly() {
        assertThat(OrderEvents.cents(new BigDecimal("12.3400"))).isEqualTo(1234);
        assertThat(OrderEvents.cents(new BigDecimal("0.0100"))).isEqualTo(1);
        assertThat(OrderEvents.cents(new BigDecimal("-7.5000"))).isEqualTo(-750);
        assertThat(OrderEvents.cents(new BigDecimal("1000000000.00"))).isEqualTo(100_000_000_000L);
        assertThatThrownBy(() -> OrderEvents.cents(new BigDecimal("12.3450"))).isInstanceOf(ArithmeticException.class);
        for (String t : List.of("2026-11-27T08:15:30.123Z", "2026-11-27T08:15:30Z", "2026-11-27T08:15:30.100Z", "1970-01-01T00:00:00.001Z")) {
            Instant i = Instant.parse(t);
            assertThat(i.toString()).isEqualTo(t);
            assertThat(OrderEvents.placedAt(i.toString())).isEqualTo(i);
        }
        List<OutgoingRecord> generated = EventGeneratorTest.generate(settings("1", "--loadgen.events=5000"));
        assertThat(generated).allMatch(r -> r.destination() == Destination.ORDERS)
                .allSatisfy(r -> assertThat(OrderEvents.toTransaction(OrderEvents.toOrder(r.event()))).isEqualTo(r.event()));
    }
}
