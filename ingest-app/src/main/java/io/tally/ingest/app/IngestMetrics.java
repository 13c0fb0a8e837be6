package io.tally.ingest.app;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
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
        registry.config().meterFilter(STATE_STORE_TAGS);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
    }

    /**
     * Kafka Streams tags a store's metrics with {@code <store type>-state-id} ({@code rocksdb-state-id} for the bucket
     * store, {@code rocksdb-window-state-id} for the dedupe store). Prometheus needs one set of label names per metric
     * name, so the registry refused every meter of the second store type ("meter registration has failed") and the
     * dedupe store's RocksDB metrics were missing. One {@code state.id} label plus a {@code store.type} label keeps both.
     */
    static final MeterFilter STATE_STORE_TAGS = new MeterFilter() {
        @Override
        public Meter.Id map(Meter.Id id) {
            if (!id.getName().startsWith("kafka.stream.state")) return id;
            List<Tag> tags = new ArrayList<>();
            boolean changed = false;
            for (Tag t : id.getTagsAsIterable()) {
                if (t.getKey().endsWith(".state.id")) {
                    tags.add(Tag.of("state.id", t.getValue()));
                    tags.add(Tag.of("store.type", t.getKey().substring(0, t.getKey().length() - ".state.id".length())));
                    changed = true;
                } else {
                    tags.add(t);
                }
            }
            return changed ? id.replaceTags(tags) : id;
        }
    };

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
