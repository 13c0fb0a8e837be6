package io.tally.ingest.app;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.BooleanSupplier;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Readiness of the roles this process runs. The aggregation is ready while Kafka Streams is running or rebalancing
 * and no failed stream thread is waiting out its back-off or, replaced, still rejoining the group
 * ({@link StreamRestarts}); the sink while its loop runs.
 */
final class IngestHealth {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The verdict and its JSON body: {@code {"status": "UP"|"DOWN", "checks": {...}}}. */
    record Report(boolean ready, String json) {}

    private final KafkaStreams streams;
    private final StreamRestarts restarts;
    private final BooleanSupplier sinkRunning;

    /** {@code streams} and {@code restarts} are null without the aggregation role, {@code sinkRunning} without the sink. */
    IngestHealth(KafkaStreams streams, StreamRestarts restarts, BooleanSupplier sinkRunning) {
        this.streams = streams;
        this.restarts = restarts;
        this.sinkRunning = sinkRunning;
    }

    Report report() {
        ObjectNode body = JSON.createObjectNode();
        ObjectNode checks = JSON.createObjectNode();
        boolean ready = true;
        if (streams != null) {
            KafkaStreams.State state = streams.state();
            checks.put("streams", state.name());
            ObjectNode thread = checks.putObject("streamThreads");
            int failures = restarts.consecutiveFailures();
            thread.put("state", restarts.backingOff() ? "backing-off" : restarts.rejoining() ? "rejoining" : "running")
                    .put("consecutiveFailures", failures);
            if (failures > 0) thread.put("lastFailureCause", restarts.lastCause().tag);
            if (restarts.backingOff()) thread.put("replacedInMs", restarts.backoffRemaining().toMillis());
            ready = (state == KafkaStreams.State.RUNNING || state == KafkaStreams.State.REBALANCING)
                    && !restarts.backingOff() && !restarts.rejoining();
        }
        if (sinkRunning != null) {
            boolean sink = sinkRunning.getAsBoolean();
            checks.put("sink", sink ? "running" : "stopped");
            ready &= sink;
        }
        body.put("status", ready ? "UP" : "DOWN").set("checks", checks);
        return new Report(ready, body.toString());
    }
}
