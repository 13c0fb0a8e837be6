package io.tally.ingest.app;

import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The meters ingest-app's endpoint shows, whatever the role: the JVM's heap and GC (the heap stays bounded with any
 * backlog; live data after GC says so), Kafka Streams' own metrics when the aggregation runs, and whatever the sink
 * and the stream-thread restarts register in {@link #registry()}.
 */
final class IngestMetrics implements AutoCloseable {
    /** Per-topic Streams meters appear only after a first fetch; micrometer looks for new ones every 60 s unless told sooner. */
    private static final Duration STREAMS_METER_REFRESH = Duration.ofSeconds(2);

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private ScheduledExecutorService streamsRefresh;

    IngestMetrics() {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
    }

    PrometheusMeterRegistry registry() {
        return registry;
    }

    /**
     * Kafka Streams' metrics (records consumed per topic, consumer lag, records sent per topic) on the same endpoint,
     * so one scrape shows the whole pipeline ({@code ./tally demo} reads it).
     */
    void bind(KafkaStreams streams) {
        streamsRefresh = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "streams-metrics-refresh");
            t.setDaemon(true);
            return t;
        });
        new KafkaStreamsMetrics(streams, List.of(), streamsRefresh, STREAMS_METER_REFRESH).bindTo(registry);
    }

    @Override
    public void close() {
        if (streamsRefresh != null) streamsRefresh.shutdownNow();
    }
}
