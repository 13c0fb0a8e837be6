package io.tally.loadgen.demo;

import java.util.List;

/**
 * One scrape of ingest-app's metrics endpoint, summed over labels: Kafka Streams' consumer and producer
 * metrics and the sink's own. NaN and infinite samples (a gauge with nothing to measure yet) count as
 * nothing.
 *
 * @param ingested      records the aggregation read from {@code transactions}
 * @param inputLag      the aggregation's records-lag on {@code transactions}
 * @param otherLag      every other records-lag: the aggregation's repartition topic
 * @param emitted       records the aggregation produced to {@code bucket-updates}
 * @param dlq           records the aggregation produced to {@code transactions.dlq}
 * @param updates       bucket updates the sink read
 * @param docs          documents the sink wrote
 * @param stale         writes left out: the stored document was already as new
 * @param docsDlq       documents the sink dead-lettered
 * @param ru            request units the sink's writes cost
 * @param throttled     sink operations answered 429
 * @param inFlight      documents the sink holds unwritten
 */
record PipelineMetrics(double ingested, double inputLag, double otherLag, double emitted, double dlq, double updates,
                       double docs, double stale, double docsDlq, double ru, double throttled, double inFlight) {
    /** The baseline when the endpoint gave nothing before the run: every counter from zero. */
    static final PipelineMetrics NONE = new PipelineMetrics(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    static PipelineMetrics of(List<PrometheusText.Sample> samples) {
        double ingested = 0, inputLag = 0, otherLag = 0, emitted = 0, dlq = 0, updates = 0, docs = 0, stale = 0,
                docsDlq = 0, ru = 0, throttled = 0, inFlight = 0;
        for (PrometheusText.Sample s : samples) {
            double v = s.value();
            if (Double.isNaN(v) || Double.isInfinite(v)) continue;
            String topic = s.label("topic");
            switch (s.name()) {
                case "kafka_consumer_fetch_manager_records_consumed_total" -> {
                    if ("transactions".equals(topic)) ingested += v;
                }
                case "kafka_consumer_fetch_manager_records_lag" -> {
                    if ("transactions".equals(topic)) inputLag += v;
                    else otherLag += v;
                }
                case "kafka_producer_topic_record_send_total" -> {
                    if ("bucket-updates".equals(topic)) emitted += v;
                    else if ("transactions.dlq".equals(topic)) dlq += v;
                }
                case "tally_sink_updates_consumed_total" -> updates += v;
                case "tally_sink_documents_written_total" -> {
                    switch (String.valueOf(s.label("outcome"))) {
                        case "written" -> docs += v;
                        case "stale" -> stale += v;
                        case "dead_lettered" -> docsDlq += v;
                        default -> { }
                    }
                }
                case "tally_sink_request_units_total" -> ru += v;
                case "tally_sink_throttled_total" -> throttled += v;
                case "tally_sink_in_flight_documents" -> inFlight += v;
                default -> { }
            }
        }
        return new PipelineMetrics(ingested, inputLag, otherLag, emitted, dlq, updates, docs, stale, docsDlq, ru, throttled, inFlight);
    }
}
