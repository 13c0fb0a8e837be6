package io.tally.rules.source;

import java.math.BigDecimal;

/**
 * One event as Tally sees it, whatever schema carried it: what the source mapping points at, read once at stage 1.
 * Stages 2 and 3 (dedupe, fan-out) and replay read only this.
 *
 * @param amount   null when the source has no amount (rules over the amount skip the event)
 * @param currency null when the source names no currency
 * @param fields   one value per {@link RuleFields} slot; null when absent or empty
 */
public record SourceEvent(String source, String transactionId, long eventTimeMs, String domain, BigDecimal amount,
                          String currency, String[] fields) {

    /**
     * What stage 2 dedupes on: the transaction id within its source, so two sources' id spaces (an order and a refund
     * numbered alike) never swallow each other's events.
     */
    public String dedupeKey() {
        return source + ':' + transactionId;
    }

    /** The value of a rule field's slot, or null. */
    public String field(int slot) {
        return fields[slot];
    }
}
