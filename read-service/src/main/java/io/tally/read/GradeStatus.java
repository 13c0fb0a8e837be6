package io.tally.read;

import io.tally.rules.state.RulesState;
import java.time.Instant;

/**
 * What the deployment's rules record says about one grade (rule × unit) when it is read: which stored values are of
 * the version counted now, and which buckets may still lack history. Without a record (rules from a file, a deployment
 * from before records existed) every stored value is current and every bucket complete, as the API always answered.
 *
 * @param recorded the grade's entry in the record; null without a record
 */
record GradeStatus(RulesState.Grade recorded) {
    /** A grade read without a record. */
    static final GradeStatus UNRECORDED = new GradeStatus(null);

    /**
     * Whether a document with this {@code ver} holds the grade's current version. A document last written under a
     * generation before the one that started counting the version holds an older version's values, or those of the
     * grade before it was removed and added again: the API answers as if it held none.
     */
    boolean holds(long documentVer) {
        return recorded == null || RulesState.generationOf(documentVer) >= recorded.since();
    }

    /** Whether the bucket starting at {@code bucketStart} (ISO-8601) may lack events whose history is still being counted. */
    boolean incomplete(String bucketStart) {
        // parsed only for a grade still being backfilled: every other grade answers without it
        return pending() && recorded.incomplete(Instant.parse(bucketStart));
    }

    /** Whether the bucket starting at {@code bucketStart} may lack events whose history is still being counted. */
    boolean incomplete(Instant bucketStart) {
        return pending() && recorded.incomplete(bucketStart);
    }

    private boolean pending() {
        return recorded != null && !recorded.complete();
    }
}
