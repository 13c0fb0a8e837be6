package io.tally.schemas.topics;

import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FinalizedVersionRange;

/**
 * Kafka 4.3.1 brokers with transaction.version=2 (their default) make exactly-once Streams producers fail again and
 * again with OutOfOrderSequenceException on internal topics; tasks abort and restart, so nothing is lost or counted
 * twice, but throughput drops several times over (docs/aggregation.md, Kafka version).
 */
public final class TransactionVersionCheck {
    private TransactionVersionCheck() {}

    /** A warning to show when the cluster runs transaction.version 2 or later; empty when not, or when it cannot tell. */
    public static Optional<String> warning(Admin admin) {
        try {
            FinalizedVersionRange tv = admin.describeFeatures().featureMetadata().get(10, TimeUnit.SECONDS)
                    .finalizedFeatures().get("transaction.version");
            if (tv == null || tv.maxVersionLevel() < 2) return Optional.empty();
            return Optional.of("the Kafka cluster runs transaction.version=" + tv.maxVersionLevel() + ": exactly-once producers on "
                    + "Kafka 4.3.1 keep failing with OutOfOrderSequenceException and restarting tasks; consider 'kafka-features "
                    + "--bootstrap-server ... downgrade --feature transaction.version=1' (see docs/aggregation.md)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (Exception e) { // an informational check: an old broker or a denied request must not stop anything
            return Optional.empty();
        }
    }
}
