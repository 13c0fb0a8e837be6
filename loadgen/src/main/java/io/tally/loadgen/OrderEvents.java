package io.tally.loadgen;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.avro.orders.Address;
import io.tally.schemas.avro.orders.Customer;
import io.tally.schemas.avro.orders.Item;
import io.tally.schemas.avro.orders.OrderEvent;
import io.tally.schemas.avro.orders.Payment;
import io.tally.schemas.avro.orders.PaymentStatus;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;

/**
 * A logical event as an {@link OrderEvent} and back. The two directions are inverse on everything loadgen
 * generates, so an order counts exactly as the logical event the ground truth was fed:
 * <ul>
 *   <li>the amount travels as whole cents: an amount with more than two fraction digits cannot be carried
 *       exactly and is refused ({@link ArithmeticException}) rather than rounded;</li>
 *   <li>{@code placedAt} is {@link Instant#toString()} of the millisecond event time, which
 *       {@link DateTimeFormatter#ISO_OFFSET_DATE_TIME} parses back to the same instant;</li>
 *   <li>no postal code is no {@code shipping} at all (digital goods, as the schema says), never an address
 *       without a postal code: either reads as "absent", and one form keeps the bytes reproducible.</li>
 * </ul>
 * Stateless and thread-safe.
 */
public final class OrderEvents {
    /** The country of every generated address; loadgen's postal codes are five-digit US-style ones. */
    static final String COUNTRY = "US";
    private static final int CENTS_SCALE = 2;
    /** The scale of {@code TransactionEvent.amount}, so a round trip gives back an equal (not only comparable) event. */
    private static final int AMOUNT_SCALE = 4;

    private OrderEvents() {}

    public static OrderEvent toOrder(TransactionEvent e) {
        String postalCode = e.getPostalCode();
        return new OrderEvent(e.getTransactionId(), e.getEventTime().toString(), e.getDomain(),
                new Customer(e.getCustomerId(), e.getEmail()),
                postalCode == null ? null : new Address(postalCode, COUNTRY),
                new Item(e.getSku(), e.getMerchant()),
                new Payment(cents(e.getAmount()), e.getCurrency(), PaymentStatus.valueOf(e.getStatus()), e.getChannel()),
                new HashMap<>(e.getAttributes()));
    }

    public static TransactionEvent toTransaction(OrderEvent o) {
        Payment p = o.getPayment();
        return new TransactionEvent(o.getOrderId(), placedAt(o.getPlacedAt()), o.getShop(), o.getCustomer().getId(),
                o.getCustomer().getEmail(), o.getShipping() == null ? null : o.getShipping().getPostalCode(),
                o.getItem().getSku(), o.getItem().getMerchant(), p.getChannel(),
                BigDecimal.valueOf(p.getAmountCents(), CENTS_SCALE).setScale(AMOUNT_SCALE), p.getCurrency(),
                p.getStatus().name(), new HashMap<>(o.getAttributes()));
    }

    /** Whole cents of {@code amount}; throws when it has a non-zero third fraction digit or beyond. */
    static long cents(BigDecimal amount) {
        return amount.movePointRight(CENTS_SCALE).longValueExact();
    }

    static Instant placedAt(String iso) {
        return Instant.from(DateTimeFormatter.ISO_OFFSET_DATE_TIME.parse(iso));
    }
}
