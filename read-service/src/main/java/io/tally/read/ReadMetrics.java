package io.tally.read;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus metrics of the service, scraped at {@code GET /metrics}.
 *
 * <ul>
 *   <li>{@code tally_read_requests_seconds} — every HTTP request, tags {@code endpoint} (the route's name, never
 *       the raw path: bounded cardinality) and {@code status}; a histogram with buckets from 0.5 ms to 5 s plus the
 *       targets 3, 7, 10, 15 and 50 ms as exact bucket bounds, so the share of requests under each target is exact.</li>
 *   <li>{@code tally_read_cosmos_seconds} — each Cosmos call behind a request, tags {@code operation}
 *       (read, range, rollup, features, probe) and {@code status} (HTTP status, or the Cosmos status code);
 *       the difference to the request histogram is the service's own overhead.</li>
 *   <li>{@code tally_read_in_flight_requests} — /v1 requests admitted and not yet answered; above
 *       {@code read.max-in-flight-requests} the service sheds (503). By Little's law it is the request rate times the
 *       latency: with Cosmos 10 ms slower, 3,000 req/s hold ~30 more requests in flight.</li>
 *   <li>{@code tally_read_rules_generation} — the generation of the rules record answered with, -1 while the rules come
 *       from {@code read.rules-file}: every instance of a fleet should show the newest within {@code read.rules-refresh.ms}.</li>
 *   <li>JVM memory, threads and CPU.</li>
 * </ul>
 * Thread-safe (Micrometer meters are).
 */
final class ReadMetrics {
    private static final Duration[] TARGETS = {
        Duration.ofMillis(1), Duration.ofMillis(3), Duration.ofMillis(7), Duration.ofMillis(10),
        Duration.ofMillis(15), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(1000)};

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** Timers by name|tag|status, so the hot path does one map lookup instead of building a meter id. */
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();

    ReadMetrics() {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
    }

    void request(String endpoint, int status, long nanos) {
        timer("tally.read.requests", "HTTP requests served, by route and status.", "endpoint", endpoint, status)
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    void cosmos(String operation, int status, long nanos) {
        timer("tally.read.cosmos", "Cosmos calls behind the requests, by operation and outcome.", "operation", operation, status)
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    void inFlight(java.util.function.Supplier<Number> requests) {
        Gauge.builder("tally.read.in.flight.requests", requests)
                .description("/v1 requests admitted and not yet answered (shed above read.max-in-flight-requests)").register(registry);
    }

    void rulesGeneration(java.util.function.Supplier<Number> generation) {
        Gauge.builder("tally.read.rules.generation", generation)
                .description("Generation of the rules record answered with; -1 while the rules come from read.rules-file").register(registry);
    }

    private Timer timer(String name, String description, String tagKey, String tagValue, int status) {
        return timers.computeIfAbsent(name + '|' + tagValue + '|' + status, k -> Timer.builder(name).description(description)
                .tag(tagKey, tagValue).tag("status", Integer.toString(status))
                .publishPercentileHistogram()
                .serviceLevelObjectives(TARGETS)
                .minimumExpectedValue(Duration.ofNanos(500_000))
                .maximumExpectedValue(Duration.ofSeconds(5))
                .register(registry));
    }

    PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text exposition. */
    String scrape() {
        return registry.scrape();
    }

    String contentType() {
        return "text/plain; version=0.0.4; charset=utf-8";
    }
}
