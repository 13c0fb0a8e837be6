package io.tally.loadgen.rules;

import io.tally.schemas.avro.TransactionEvent;
import java.util.Set;

/**
 * Field access by the names rules use. Explicit rather than Avro's generic {@code get(String)}, so a
 * rule naming a field that does not exist fails when the rules are loaded, not silently per event.
 */
public final class EventFields {
    /** Fields a rule may name; {@code attributes.<key>} is also allowed. */
    public static final Set<String> NAMES = Set.of("transactionId", "domain", "customerId", "email", "postalCode",
            "sku", "merchant", "channel", "currency", "status");
    private static final String ATTRIBUTES = "attributes.";

    private EventFields() {}

    public static boolean isKnown(String field) {
        return NAMES.contains(field) || (field.startsWith(ATTRIBUTES) && field.length() > ATTRIBUTES.length());
    }

    /** The field's value as a string, or null when the event has none. */
    public static String get(TransactionEvent e, String field) {
        return switch (field) {
            case "transactionId" -> e.getTransactionId();
            case "domain" -> e.getDomain();
            case "customerId" -> e.getCustomerId();
            case "email" -> e.getEmail();
            case "postalCode" -> e.getPostalCode();
            case "sku" -> e.getSku();
            case "merchant" -> e.getMerchant();
            case "channel" -> e.getChannel();
            case "currency" -> e.getCurrency();
            case "status" -> e.getStatus();
            default -> {
                if (!field.startsWith(ATTRIBUTES)) throw new IllegalArgumentException("unknown event field " + field);
                yield e.getAttributes() == null ? null : e.getAttributes().get(field.substring(ATTRIBUTES.length()));
            }
        };
    }
}
