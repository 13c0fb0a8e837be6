package io.tally.ingest.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.config.ConfigException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IngestSettingsTest {

    @Test
    void theFreshnessTargetSetsTheCommitIntervalAndTheFlushWindow() {
        IngestSettings defaults = IngestSettings.load(new String[0], Map.of());
        assertThat(defaults.commitInterval()).isEqualTo(Duration.ofMillis(166));
        assertThat(defaults.sink().flushWindow()).isEqualTo(Duration.ofMillis(400));

        IngestSettings relaxed = IngestSettings.load(new String[] {"--ingest.freshness-target.ms=30000"}, Map.of());
        assertThat(relaxed.commitInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(relaxed.sink().flushWindow()).isEqualTo(Duration.ofSeconds(12));
    }

    @Test
    void kafkaStreamsCommitsAtTheBacklogIntervalAndTheAggregationAsksForTheFreshOneWhileItKeepsUp() {
        IngestSettings defaults = IngestSettings.load(new String[0], Map.of());
        assertThat(defaults.streamsCommitInterval()).isEqualTo(Duration.ofSeconds(3));
        io.tally.ingest.topology.CommitPace pace = defaults.aggregation().topology().commitPace();
        assertThat(pace.freshInterval()).isEqualTo(Duration.ofMillis(166));
        assertThat(pace.behindAfter()).as("twice the freshness target, as the sink's late buckets").isEqualTo(Duration.ofSeconds(2));

        IngestSettings onePace = IngestSettings.load(new String[] {"--ingest.backlog.commit-interval.ms=0"}, Map.of());
        assertThat(onePace.aggregation().topology().commitPace().paced()).isFalse();
        assertThat(onePace.streamsCommitInterval()).isEqualTo(Duration.ofMillis(166));

        assertThatThrownBy(() -> IngestSettings.load(new String[] {"--ingest.backlog.commit-interval.ms=10000"}, Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ingest.backlog.commit-interval.ms");
    }

    @Test
    void anIntervalSetItselfWinsOverTheTarget() {
        IngestSettings s = IngestSettings.load(new String[] {"--ingest.freshness-target.ms=5000", "--ingest.commit-interval.ms=200",
                "--sink.flush-window.ms=300"}, Map.of());
        assertThat(s.commitInterval()).isEqualTo(Duration.ofMillis(200));
        assertThat(s.sink().flushWindow()).isEqualTo(Duration.ofMillis(300));
    }

    @Test
    void theInputsUnknownSchemaIdsAreRememberedForAMinuteUnlessSetOtherwise() {
        assertThat(IngestSettings.load(new String[0], Map.of()).registryClient().missingIdCacheTtl()).isEqualTo(Duration.ofMinutes(1));
        assertThat(IngestSettings.load(new String[] {"--schema.registry.missing-id-cache-ttl.ms=0"}, Map.of()).registryClient()
                .missingIdCacheTtl()).isZero();
    }

    @Test
    void aTargetBelowATenthOfASecondIsRefused() {
        assertThatThrownBy(() -> IngestSettings.load(new String[] {"--ingest.freshness-target.ms=50"}, Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ingest.freshness-target.ms");
    }
}
