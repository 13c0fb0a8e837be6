package io.tally.ingest.topology;

import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Currency;
import java.util.Optional;

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

    private final BigDecimal maxAmount;
    private final long maxFutureSkewMs;
    private final long lateBoundMs;

    public EventValidator(BigDecimal maxAmount, Duration maxFutureSkew, Duration lateBound) {
        this.maxAmount = maxAmount;
        this.maxFutureSkewMs = maxFutureSkew.toMillis();
        this.lateBoundMs = lateBound.toMillis();
    }

    public Optional<Rejection> check(TransactionEvent e, long recordTimestampMs) {
        if (blank(e.getTransactionId())) return invalid("transactionId is empty");
        if (blank(e.getDomain())) return invalid("domain is empty");
        if (e.getDomain().indexOf('|') >= 0) return invalid("domain contains '|', the partition-key separator");
        if (blank(e.getCustomerId())) return invalid("customerId is empty");
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
