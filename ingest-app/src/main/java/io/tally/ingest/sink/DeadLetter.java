package io.tally.ingest.sink;

import io.tally.schemas.DeadLetters;
import io.tally.schemas.DeadLetters.Reason;

/**
 * Why a bucket update goes to {@code bucket-updates.dlq}, in the headers' vocabulary ({@link DeadLetters}): it does
 * not decode, or Cosmos refused it for good with {@code status}/{@code subStatus} (0/0 when Cosmos never saw it).
 */
public record DeadLetter(Reason reason, String message, int status, int subStatus) {

    static DeadLetter undecodable(String message) {
        return new DeadLetter(Reason.DECODE_FAILED, message, 0, 0);
    }

    /** The message names the status too: a bulk item's refusal often comes without any text of its own. */
    static DeadLetter refused(int status, int subStatus, String serviceMessage) {
        String said = serviceMessage == null || serviceMessage.isBlank() ? "" : ": " + serviceMessage;
        return new DeadLetter(Reason.COSMOS_REFUSED, "Cosmos answered " + status + "/" + subStatus + said, status, subStatus);
    }

    /** {@code COSMOS_REFUSED: Cosmos answered 400/0: <message>} or {@code DECODE_FAILED: <message>}, for logs and reports. */
    @Override
    public String toString() {
        return reason + ": " + message;
    }
}
