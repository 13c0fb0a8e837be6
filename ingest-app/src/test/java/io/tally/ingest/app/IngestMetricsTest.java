package io.tally.ingest.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

class IngestMetricsTest {

    @Test
    void theMetricsOfAKeyValueAndAWindowStoreBothReachPrometheus() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().meterFilter(IngestMetrics.STATE_STORE_TAGS);
        // The tags Kafka Streams' metrics carry through Micrometer's KafkaStreamsMetrics for Tally's two stores.
        Gauge.builder("kafka.stream.state.put.rate", () -> 1.0)
                .tags(Tags.of("kafka.version", "4.3.1", "rocksdb.state.id", "bucket-store", "task.id", "1_0", "thread.id", "t-1"))
                .register(registry);
        Gauge.builder("kafka.stream.state.put.rate", () -> 2.0)
                .tags(Tags.of("kafka.version", "4.3.1", "rocksdb.window.state.id", "dedupe-cells", "task.id", "0_0", "thread.id", "t-1"))
                .register(registry);

        String scrape = registry.scrape();
        assertThat(scrape).contains("state_id=\"bucket-store\"", "store_type=\"rocksdb\"")
                .contains("state_id=\"dedupe-cells\"", "store_type=\"rocksdb.window\"");
        assertThat(registry.find("kafka.stream.state.put.rate").gauges()).hasSize(2);
    }

    @Test
    void otherMetersKeepTheirTags() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().meterFilter(IngestMetrics.STATE_STORE_TAGS);
        Gauge.builder("kafka.consumer.fetch.manager.records.lag", () -> 3.0).tags(Tags.of("client.id", "c", "partition", "0"))
                .register(registry);
        assertThat(registry.get("kafka.consumer.fetch.manager.records.lag").tags("client.id", "c", "partition", "0").gauge().value())
                .isEqualTo(3.0);
    }
}
