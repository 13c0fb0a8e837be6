package io.tally.loadgen.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {
    @Test
    void readsNamesLabelsAndValuesAndSkipsComments() {
        List<PrometheusText.Sample> samples = PrometheusText.parse("""
                # HELP tally_sink_documents_written_total documents written
                # TYPE tally_sink_documents_written_total counter
                tally_sink_documents_written_total{outcome="written",} 1234.0
                tally_sink_in_flight_documents 0.0

                kafka_consumer_fetch_manager_records_lag{client_id="a-StreamThread-1-consumer",partition="3",topic="transactions",} 17.0
                up{} 1 1700000000000
                """);

        assertThat(samples).containsExactly(
                new PrometheusText.Sample("tally_sink_documents_written_total", Map.of("outcome", "written"), 1234),
                new PrometheusText.Sample("tally_sink_in_flight_documents", Map.of(), 0),
                new PrometheusText.Sample("kafka_consumer_fetch_manager_records_lag",
                        Map.of("client_id", "a-StreamThread-1-consumer", "partition", "3", "topic", "transactions"), 17),
                new PrometheusText.Sample("up", Map.of(), 1));
    }

    @Test
    void labelValuesMayHoldEscapesCommasAndBraces() {
        PrometheusText.Sample s = PrometheusText.parse("m{a=\"x,y}\",b=\"say \\\"hi\\\"\",c=\"back\\\\slash\",d=\"two\\nlines\"} 2.5e3").get(0);

        assertThat(s.labels()).containsExactly(Map.entry("a", "x,y}"), Map.entry("b", "say \"hi\""),
                Map.entry("c", "back\\slash"), Map.entry("d", "two\nlines"));
        assertThat(s.value()).isEqualTo(2500);
    }

    @Test
    void readsNaNAndInfinities() {
        List<PrometheusText.Sample> samples = PrometheusText.parse("a NaN\nb +Inf\nc -Inf\nd 3\n");

        assertThat(samples).extracting(PrometheusText.Sample::value)
                .containsExactly(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 3.0);
    }

    @Test
    void aLineThatIsNotASampleIsNamed() {
        assertThatThrownBy(() -> PrometheusText.parse("ok 1\nbroken{topic=\"t\" 1\n"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("line 2").hasMessageContaining("broken{topic");
        assertThatThrownBy(() -> PrometheusText.parse("no_value\n")).hasMessageContaining("line 1");
        assertThatThrownBy(() -> PrometheusText.parse("m 1 2 3\n")).hasMessageContaining("line 1");
        assertThatThrownBy(() -> PrometheusText.parse("m{a=b} 1\n")).hasMessageContaining("key=\"value\"");
        assertThatThrownBy(() -> PrometheusText.parse("m one\n")).hasMessageContaining("line 1");
    }
}
