package io.tally.loadgen.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** From a scrape of ingest-app's endpoint to the figures of the live line: sums, baseline, lags. */
class ProgressTest {
    /** Two aggregation threads, the sink, and the series the demo does not count. */
    static final String SCRAPE = """
            # TYPE kafka_consumer_fetch_manager_records_consumed_total counter
            kafka_consumer_fetch_manager_records_consumed_total{client_id="t1",topic="transactions",} 600.0
            kafka_consumer_fetch_manager_records_consumed_total{client_id="t2",topic="transactions",} 400.0
            kafka_consumer_fetch_manager_records_consumed_total{client_id="t1",topic="tally-ingest-bucket-repartition",} 900.0
            kafka_consumer_fetch_manager_records_lag{client_id="t1",partition="0",topic="transactions",} 5.0
            kafka_consumer_fetch_manager_records_lag{client_id="t2",partition="1",topic="transactions",} 7.0
            kafka_consumer_fetch_manager_records_lag{client_id="t1",partition="0",topic="tally-ingest-bucket-repartition",} 3.0
            kafka_consumer_fetch_manager_records_lag{client_id="t1",partition="1",topic="tally-ingest-bucket-repartition",} NaN
            kafka_producer_topic_record_send_total{client_id="t1-producer",topic="bucket-updates",} 500.0
            kafka_producer_topic_record_send_total{client_id="t2-producer",topic="bucket-updates",} 300.0
            kafka_producer_topic_record_send_total{client_id="t1-producer",topic="transactions.dlq",} 20.0
            kafka_producer_topic_record_send_total{client_id="t1-producer",topic="tally-ingest-bucket-repartition",} 900.0
            tally_sink_updates_consumed_total 750.0
            tally_sink_documents_written_total{outcome="written",} 400.0
            tally_sink_documents_written_total{outcome="stale",} 4.0
            tally_sink_documents_written_total{outcome="dead_lettered",} 1.0
            tally_sink_request_units_total 4321.6
            tally_sink_throttled_total 12.0
            tally_sink_in_flight_documents 6.0
            tally_sink_consumer_lag 99.0
            """;

    @Test
    void sumsEachFigureOverItsSeries() {
        PipelineMetrics m = PipelineMetrics.of(PrometheusText.parse(SCRAPE), PipelineMetrics.DEFAULT_SOURCES);

        assertThat(m).isEqualTo(new PipelineMetrics(1000, 12, 3, 800, 20, 750, 400, 4, 1, 4321.6, 12, 6));
    }

    @Test
    void countersCountFromTheBaselineWhileLagsAndInFlightStandAsTheyAre() {
        PipelineMetrics now = PipelineMetrics.of(PrometheusText.parse(SCRAPE), PipelineMetrics.DEFAULT_SOURCES);
        PipelineMetrics base = new PipelineMetrics(100, 50, 50, 80, 2, 75, 40, 1, 0, 321.2, 2, 9);

        Progress p = Progress.of(now, base, 905);

        // 905 produced, 900 read since the baseline: 5 unread, less than the 12 of the fetch lag.
        assertThat(p).isEqualTo(new Progress(900, 3 + 12, 720, 18, 675, 360, 3, 1, 4322 - 321, 10, 50, 6));
    }

    @Test
    void whatLoadgenProducedAndTheAggregationHasNotReadIsLagEvenWhenItsFetchLagSaysLess() {
        PipelineMetrics now = PipelineMetrics.of(PrometheusText.parse(SCRAPE), PipelineMetrics.DEFAULT_SOURCES);

        Progress p = Progress.of(now, PipelineMetrics.NONE, 1400);

        assertThat(p.aggLag()).isEqualTo(3 + 400);
        assertThat(p.ingested()).isEqualTo(1000);
    }

    @Test
    void theSinkIsNeverBehindByANegativeCount() {
        PipelineMetrics now = new PipelineMetrics(0, 0, 0, 10, 0, 12, 0, 0, 0, 0, 0, 0);

        assertThat(Progress.of(now, PipelineMetrics.NONE, 0).sinkLag()).isZero();
    }

    /** Events on two source topics: both are ingested and input lag; the sink's lag on bucket-updates is no aggregation lag. */
    @Test
    void everySourceTopicIsInputAndTheSinksLagIsNotTheAggregations() {
        String twoTopics = SCRAPE + """
                kafka_consumer_fetch_manager_records_consumed_total{client_id="t1",topic="orders",} 250.0
                kafka_consumer_fetch_manager_records_lag{client_id="t1",partition="0",topic="orders",} 4.0
                kafka_consumer_fetch_manager_records_consumed_total{client_id="s",topic="bucket-updates",} 700.0
                kafka_consumer_fetch_manager_records_lag{client_id="s",partition="0",topic="bucket-updates",} 50.0
                """;

        PipelineMetrics m = PipelineMetrics.of(PrometheusText.parse(twoTopics), java.util.Set.of("transactions", "orders"));

        assertThat(m).isEqualTo(new PipelineMetrics(1250, 16, 3, 800, 20, 750, 400, 4, 1, 4321.6, 12, 6));
        assertThat(Progress.of(m, PipelineMetrics.NONE, 1250).aggLag()).isEqualTo(3 + 16);
    }
}
