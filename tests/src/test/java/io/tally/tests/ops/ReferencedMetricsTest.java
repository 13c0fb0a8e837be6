package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The metric names found in PromQL are the metrics, not its functions, keywords, labels, strings or units. */
class ReferencedMetricsTest {

    @Test
    void findsTheMetricsOfAnExpression() {
        assertThat(ReferencedMetrics.metricNames(
                "sum by (endpoint, le) (rate(tally_read_requests_seconds_bucket{status=~\"5..\", endpoint!=\"a_b\"}[$__rate_interval]))"
                        + " / ignoring(status) group_left sum without (x) (increase(tally_read_requests_seconds_count[1d] offset 5m))"
                        + " and on() (tally:sink_lag:sum > 1e3) or vector(0)"))
                .containsExactly("tally:sink_lag:sum", "tally_read_requests_seconds_bucket", "tally_read_requests_seconds_count");
        assertThat(ReferencedMetrics.metricNames("absent(tally_sink_updates_consumed_total)")).containsExactly("tally_sink_updates_consumed_total");
        assertThat(ReferencedMetrics.metricNames("max(jvm_memory_used_bytes) / 1000")).containsExactly("jvm_memory_used_bytes");
    }

    @Test
    void readsTheSeriesNamesOfAScrape() {
        assertThat(ReferencedMetrics.seriesNames("""
                # HELP tally_sink_throttled_total operations answered 429
                # TYPE tally_sink_throttled_total counter
                tally_sink_throttled_total 3.0
                tally_sink_bulk_call_seconds{quantile="0.5"} 0.01
                """)).containsExactly("tally_sink_bulk_call_seconds", "tally_sink_throttled_total");
    }

    @Test
    void everyDashboardAndRuleReferencesSomeMetric() {
        assertThat(ReferencedMetrics.referenced()).containsKeys("tally_sink_stalled_writes", "tally_read_requests_seconds_bucket",
                "kafka_consumer_fetch_manager_records_lag", "kafka_stream_failed_stream_threads_total");
    }

    @Test
    void aMetricNoAppExportsFailsTheCheckByName() {
        assertThatThrownBy(() -> ReferencedMetrics.assertAllExported(() -> Map.of("unit-test", "tally_sink_stalled_writes 0.0\n"), Duration.ZERO))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("tally_read_requests_seconds_bucket")
                .hasMessageContaining("deploy/monitoring/grafana/dashboards/tally.json");
    }
}
