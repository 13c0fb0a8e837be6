package io.tally.ingest.topology;

import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import io.tally.schemas.DeadLetters;
import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Currency;
import java.util.List;
import java.util.Optional;
import org.apache.avro.Schema;

/**
 * Stage 1, second half: an event that decoded but cannot be aggregated correctly is rejected with a
 * reason, never dropped. Time bounds compare the event time with the Kafka record timestamp (when
 * the producer sent it), not with the processing clock, so reprocessing the same records later (a
 * replay, a restart after an outage) classifies each exactly as the live run did: FUTURE beyond the
 * allowed skew (a misconfigured producer clock), LATE beyond the late bound (its buckets expired).
 */
public final class EventValidator {
    /** A rejection: the DLQ reason and a message naming the offending field. */
    public record Rejection(DeadLetters.Reason reason, String message) {}

    /**
     * Longest value, in UTF-8 bytes, of the domain and of a field a rule keys on (entity or qualifier). Cosmos
     * limits a partition key to 2,048 bytes and an id to 1,023: {@code domain|entity} stays within 900 + 1 + 900,
     * and {@code rule:qualifier|unit|index} within 64 (the longest rule name) + 1 + 900 + 1 + 6 + 1 + 20. A longer
     * value would be accepted here and then refused by Cosmos for good, far from the record that caused it.
     */
    public static final int MAX_KEY_BYTES = 900;

    private final BigDecimal maxAmount;
    private final long maxFutureSkewMs;
    private final long lateBoundMs;
    private final List<Schema.Field> keyFields;

    public EventValidator(BigDecimal maxAmount, Duration maxFutureSkew, Duration lateBound, Collection<String> keyFields) {
        this.maxAmount = maxAmount;
        this.maxFutureSkewMs = maxFutureSkew.toMillis();
        this.lateBoundMs = lateBound.toMillis();
        this.keyFields = keyFields.stream().distinct().map(f -> TransactionEvent.getClassSchema().getField(f)).toList();
    }

    /** The validator of the live topology and of replay: the settings' bounds, and the key fields of the rules. */
    public static EventValidator of(TopologySettings settings, GradeRules rules) {
        List<String> keys = new ArrayList<>();
        for (GradeRule r : rules.rules()) {
            keys.add(r.entityField());
            r.qualifierField().ifPresent(keys::add);
        }
        return new EventValidator(settings.maxAmount(), settings.maxFutureSkew(), settings.lateBound(), keys);
    }

    public Optional<Rejection> check(TransactionEvent e, long recordTimestampMs) {
        if (blank(e.getTransactionId())) return invalid("transactionId is empty");
        if (blank(e.getDomain())) return invalid("domain is empty");
        if (e.getDomain().indexOf('|') >= 0) return invalid("domain contains '|', the partition-key separator");
        if (blank(e.getCustomerId())) return invalid("customerId is empty");
        if (tooLong(e.getDomain())) return invalid("domain is longer than " + MAX_KEY_BYTES + " bytes");
        for (Schema.Field f : keyFields) {
            Object v = e.get(f.pos());
            if (v != null && tooLong(v.toString())) return invalid(f.name() + " is longer than " + MAX_KEY_BYTES + " bytes");
        }
        BigDecimal amount = e.getAmount();
        if (amount == null) return invalid("amount is missing");
        if (amount.signum() < 0) return invalid("amount " + amount.toPlainString() + " is negative");
        if (amount.compareTo(maxAmount) > 0) {
            return invalid("amount " + amount.toPlainString() + " exceeds the maximum " + maxAmount.toPlainString());
        }
        if (!knownCurrency(e.getCurrency())) return invalid("currency '" + e.getCurrency() + "' is not an ISO 4217 code");
        long t = e.getEventTime().toEpochMilli();
        if (t > recordTimestampMs + maxFutureSkewMs) {
            return Optional.of(new Rejection(DeadLetters.Reason.FUTURE, "eventTime " + e.getEventTime()
                    + " is more than " + Duration.ofMillis(maxFutureSkewMs) + " ahead of its record timestamp"));
        }
        if (t < recordTimestampMs - lateBoundMs) {
            return Optional.of(new Rejection(DeadLetters.Reason.LATE, "eventTime " + e.getEventTime()
                    + " is older than its record timestamp by more than the late bound " + Duration.ofMillis(lateBoundMs)));
        }
        return Optional.empty();
    }

    private static Optional<Rejection> invalid(String message) {
        return Optional.of(new Rejection(DeadLetters.Reason.INVALID, message));
    }

    private static boolean tooLong(String s) {
        // Cheap for the usual short value: only a value that may exceed the bound in UTF-8 is encoded.
        return s.length() * 3 > MAX_KEY_BYTES && s.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES;
    }

    private static boolean blank(CharSequence s) {
        return s == null || s.toString().isBlank();
    }

    private static boolean knownCurrency(String code) {
        if (code == null || code.length() != 3) return false;
        try {
            Currency.getInstance(code);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
