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
 */
public record TopologySettings(Duration dedupeHorizon, Duration maxFutureSkew, Duration lateBound, BigDecimal maxAmount) {}
