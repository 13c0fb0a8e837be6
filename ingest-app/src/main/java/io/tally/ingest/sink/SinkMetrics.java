package io.tally.ingest.sink;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The sink's meters (names as Prometheus shows them):
 * {@code tally_sink_updates_consumed_total}, {@code tally_sink_documents_written_total{outcome=written|stale|dead_lettered}},
 * {@code tally_sink_request_units_total}, {@code tally_sink_window_coalescing_ratio} (updates per document),
 * {@code tally_sink_bulk_call_operations}, {@code tally_sink_bulk_call_seconds} (p50/p95/p99),
 * {@code tally_sink_retries_total{status}}, {@code tally_sink_throttled_total},
 * {@code tally_sink_concurrency_limit}, {@code tally_sink_target_concurrency}, {@code tally_sink_call_latency_seconds},
 * {@code tally_sink_in_flight_documents}, {@code tally_sink_waiting_documents}, {@code tally_sink_stalled_writes}, {@code tally_sink_consumer_lag},
 * {@code tally_sink_operations_sent_total} (bulk operations sent, retries included: the 429 share is
 * {@code tally_sink_throttled_total} over it), {@code tally_sink_pacing_rate} (RU/s the {@link RuPacer} admits, 0 while it
 * is not pacing), {@code tally_sink_pacing_ru_per_operation}, {@code tally_sink_pacing_wait_seconds} (time calls waited
 * for tokens: count, sum, max).
 * RU/s, documents/s and the throttle rate are {@code rate()} of the counters.
 *
 * <p>Thread-safe (Micrometer meters are).
 */
public final class SinkMetrics {
    private final MeterRegistry registry;
    final Counter consumed;
    final Counter written;
    final Counter stale;
    final Counter deadLettered;
    final Counter requestUnits;
    final Counter throttled;
    final Counter operationsSent;
    final Timer pacingWait;
    final DistributionSummary coalescing;
    final DistributionSummary callSize;
    final Timer callLatency;
    final AtomicLong lag = new AtomicLong();
    private final ConcurrentHashMap<String, Counter> retries = new ConcurrentHashMap<>();

    public SinkMetrics(MeterRegistry registry) {
        this.registry = registry;
        consumed = Counter.builder("tally.sink.updates.consumed").description("bucket updates read from Kafka").register(registry);
        written = docs("written");
        stale = docs("stale");
        deadLettered = docs("dead_lettered");
        requestUnits = Counter.builder("tally.sink.request.units").description("RU charged for sink writes").register(registry);
        throttled = Counter.builder("tally.sink.throttled").description("operations answered 429").register(registry);
        operationsSent = Counter.builder("tally.sink.operations.sent").description("bulk operations sent, retries included")
                .register(registry);
        pacingWait = Timer.builder("tally.sink.pacing.wait").description("time a bulk call waited for request-unit tokens")
                .register(registry);
        coalescing = DistributionSummary.builder("tally.sink.window.coalescing.ratio")
                .description("updates per written document, per window").register(registry);
        callSize = DistributionSummary.builder("tally.sink.bulk.call.operations").description("operations per bulk call")
                .publishPercentiles(0.5, 0.99).register(registry);
        callLatency = Timer.builder("tally.sink.bulk.call").description("latency of one executeBulkOperations call")
                .publishPercentiles(0.5, 0.95, 0.99).register(registry);
        Gauge.builder("tally.sink.consumer.lag", lag, AtomicLong::get).description("records-lag-max of the sink consumer")
                .register(registry);
    }

    private Counter docs(String outcome) {
        return Counter.builder("tally.sink.documents.written").tag("outcome", outcome)
                .description("documents whose write finished, by outcome").register(registry);
    }

    void retry(int status, int subStatus) {
        retries.computeIfAbsent(status + "/" + subStatus, k -> Counter.builder("tally.sink.retries")
                .tag("status", Integer.toString(status)).tag("substatus", Integer.toString(subStatus))
                .description("operations retried by the sink, by status").register(registry)).increment();
    }

    void gauge(String name, String description, Supplier<Number> value) {
        Gauge.builder(name, value).description(description).register(registry);
    }

    void call(int operations, Duration latency) {
        callSize.record(operations);
        callLatency.record(latency);
    }

    public MeterRegistry registry() { return registry; }
}
