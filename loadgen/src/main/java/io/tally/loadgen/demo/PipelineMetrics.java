package io.tally.loadgen.demo;

import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * One scrape of ingest-app's metrics endpoint, summed over labels: Kafka Streams' consumer and producer
 * metrics and the sink's own. NaN and infinite samples (a gauge with nothing to measure yet) count as
 * nothing.
 *
 * @param ingested      records the aggregation read from its source topics ({@code transactions}, and {@code orders}
 *                      with the two-schema demo)
 * @param inputLag      the aggregation's records-lag on its source topics
 * @param otherLag      the aggregation's other records-lag: its repartition topic (not the sink's on
 *                      {@code bucket-updates}, which {@link Progress} counts from what was emitted and read)
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

    /** The demo's source topic when it runs with the shipped sources file. */
    static final Set<String> DEFAULT_SOURCES = Set.of("transactions");
    private static final String SINK_INPUT = "bucket-updates";

    /** @param sourceTopics the topics the aggregation reads events from, as its sources file names them */
    static PipelineMetrics of(List<PrometheusText.Sample> samples, Collection<String> sourceTopics) {
        double ingested = 0, inputLag = 0, otherLag = 0, emitted = 0, dlq = 0, updates = 0, docs = 0, stale = 0,
                docsDlq = 0, ru = 0, throttled = 0, inFlight = 0;
        for (PrometheusText.Sample s : samples) {
            double v = s.value();
            if (Double.isNaN(v) || Double.isInfinite(v)) continue;
            String topic = s.label("topic");
            switch (s.name()) {
                case "kafka_consumer_fetch_manager_records_consumed_total" -> {
                    if (sourceTopics.contains(topic)) ingested += v;
                }
                case "kafka_consumer_fetch_manager_records_lag" -> {
                    if (sourceTopics.contains(topic)) inputLag += v;
                    else if (!SINK_INPUT.equals(topic)) otherLag += v;
                }
                case "kafka_producer_topic_record_send_total" -> {
                    if (SINK_INPUT.equals(topic)) emitted += v;
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
