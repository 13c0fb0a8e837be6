package io.tally.ingest.topology;

import io.tally.rules.source.RuleFields;
import io.tally.rules.source.SourceEvent;
import io.tally.rules.source.SourceMapping;
import io.tally.rules.source.Sources;
import io.tally.schemas.DeadLetters;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Currency;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Stage 1, second half: an event that decoded but cannot be aggregated correctly is rejected with a
 * reason, never dropped. (What a source's mapping itself requires, a transaction id, a domain, an event time, its
 * required fields, is checked as the event is read: {@link io.tally.rules.source.SourcePlan}.) Time bounds compare the event time with the Kafka record timestamp (when
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
    private final RuleFields fields;
    private final int[] keySlots;
    private final Set<String> sourcesWithCurrency;

    public EventValidator(BigDecimal maxAmount, Duration maxFutureSkew, Duration lateBound, RuleFields fields, Sources sources) {
        this.maxAmount = maxAmount;
        this.maxFutureSkewMs = maxFutureSkew.toMillis();
        this.lateBoundMs = lateBound.toMillis();
        this.fields = fields;
        this.keySlots = IntStream.range(0, fields.names().size()).filter(fields::isKey).toArray();
        this.sourcesWithCurrency = sources.sources().stream().filter(m -> m.currency().isPresent())
                .map(SourceMapping::name).collect(Collectors.toUnmodifiableSet());
    }

    /** The validator of the live topology and of replay: the settings' bounds, the rules' key fields, the sources. */
    public static EventValidator of(TopologySettings settings, RuleFields fields, Sources sources) {
        return new EventValidator(settings.maxAmount(), settings.maxFutureSkew(), settings.lateBound(), fields, sources);
    }

    public Optional<Rejection> check(SourceEvent e, long recordTimestampMs) {
        if (tooLong(e.domain())) return invalid("domain is longer than " + MAX_KEY_BYTES + " bytes");
        for (int slot : keySlots) {
            String v = e.field(slot);
            if (v != null && tooLong(v)) return invalid(fields.names().get(slot) + " is longer than " + MAX_KEY_BYTES + " bytes");
        }
        BigDecimal amount = e.amount();
        if (amount != null) {
            if (amount.signum() < 0) return invalid("amount " + amount.toPlainString() + " is negative");
            if (amount.compareTo(maxAmount) > 0) {
                return invalid("amount " + amount.toPlainString() + " exceeds the maximum " + maxAmount.toPlainString());
            }
        }
        if (sourcesWithCurrency.contains(e.source()) && !knownCurrency(e.currency())) {
            return invalid("currency '" + e.currency() + "' is not an ISO 4217 code");
        }
        long t = e.eventTimeMs();
        if (t > recordTimestampMs + maxFutureSkewMs) {
            return Optional.of(new Rejection(DeadLetters.Reason.FUTURE, "eventTime " + Instant.ofEpochMilli(t)
                    + " is more than " + Duration.ofMillis(maxFutureSkewMs) + " ahead of its record timestamp"));
        }
        if (t < recordTimestampMs - lateBoundMs) {
            return Optional.of(new Rejection(DeadLetters.Reason.LATE, "eventTime " + Instant.ofEpochMilli(t)
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
