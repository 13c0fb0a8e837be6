package io.tally.ingest.topology;

import java.math.BigDecimal;
import java.time.Duration;

/**
 * What stages 1-6 need besides the rules.
 *
 * @param dedupeHorizon how long a transaction id is remembered (duplicates within it count once)
 * @param maxFutureSkew how far ahead of the processing clock an event time may be
 * @param lateBound     how far behind the processing clock an event time may be
 * @param maxAmount     the largest amount accepted; larger ones are INVALID
 * @param commitPace    when stages 3 and 5 ask for a commit sooner than Kafka Streams' commit interval
 */
public record TopologySettings(Duration dedupeHorizon, Duration maxFutureSkew, Duration lateBound, BigDecimal maxAmount,
                               CommitPace commitPace) {
    /** Committing at Kafka Streams' interval alone. */
    public TopologySettings(Duration dedupeHorizon, Duration maxFutureSkew, Duration lateBound, BigDecimal maxAmount) {
        this(dedupeHorizon, maxFutureSkew, lateBound, maxAmount, CommitPace.NONE);
    }

    public TopologySettings withCommitPace(CommitPace pace) {
        return new TopologySettings(dedupeHorizon, maxFutureSkew, lateBound, maxAmount, pace);
    }
}
