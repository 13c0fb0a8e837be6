package io.tally.ingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.ingest.freshness.FreshnessTarget;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SinkSettingsTest {

    @Test
    void everySettingIsDocumentedDefaultedAndPrefixed() {
        assertThat(SinkSettings.ALL).allSatisfy(s -> {
            assertThat(s.key()).startsWith("sink.");
            assertThat(s.doc()).isNotBlank();
            assertThat(s.defaultValue()).isPresent();
        });
        SinkSettings d = SinkSettings.defaults();
        assertThat(d.groupId()).isEqualTo("tally-sink");
        assertThat(d.flushWindow()).isEqualTo(FreshnessTarget.DEFAULT.flushWindow());
    }

    @Test
    void theFlushWindowFollowsTheFreshnessTargetUnlessSetItself() {
        FreshnessTarget fiveSeconds = new FreshnessTarget(Duration.ofSeconds(5));
        assertThat(SinkSettings.from(Config.load(SinkSettings.ALL, List.of(), new String[0], Map.of()), fiveSeconds).flushWindow())
                .isEqualTo(Duration.ofSeconds(2));
        assertThat(SinkSettings.from(Config.load(SinkSettings.ALL, List.of(), new String[] {"--sink.flush-window.ms=300"}, Map.of()),
                fiveSeconds).flushWindow()).isEqualTo(Duration.ofMillis(300));
    }

    @Test
    void theHeapForWaitingDocumentsIsAQuarterOfTheMaximumHeapUnlessSetItself() {
        assertThat(SinkSettings.defaults().windowMaxBytes()).isEqualTo(Runtime.getRuntime().maxMemory() / 4);
        assertThat(SinkSettings.from(Config.load(SinkSettings.ALL, List.of(), new String[] {"--sink.window.max-bytes=1048576"}, Map.of()))
                .windowMaxBytes()).isEqualTo(1L << 20);
        assertThatThrownBy(() -> SinkSettings.from(Config.load(SinkSettings.ALL, List.of(), new String[] {"--sink.window.max-bytes=-1"}, Map.of())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("sink.window.max-bytes");
    }

    @Test
    void crossFieldProblemsAreListedTogether() {
        assertThatThrownBy(() -> SinkSettings.from(Config.load(SinkSettings.ALL, List.of(), new String[] {
                "--sink.bulk.chunk-size=10", "--sink.bulk.micro-batch-size=100",
                "--sink.retry.initial-backoff.ms=100", "--sink.retry.max-backoff.ms=50",
                "--sink.concurrency.initial=50"}, Map.of())))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).hasSize(3));
    }

    @Test
    void anUpdateFarBehindWaitsAsLongAsItIsBehindBeyondTwiceTheFreshnessTargetUpToItsBound() {
        Duration flush = Duration.ofMillis(400), max = Duration.ofSeconds(60);
        Coalescer.Holds holds = BucketSink.holds(SinkSettings.defaults());
        // quiet: twice the target, and the aggregation's pause while it drains (a 3 s commit interval, then its commit)
        assertThat(holds).isEqualTo(new Coalescer.Holds(flush, Duration.ofSeconds(2), max, Duration.ofMinutes(5), Duration.ofSeconds(8)));
        Object[][] cases = {
                {Long.MAX_VALUE, flush},             // nothing timestamped: the flush window
                {0L, flush}, {800L, flush},          // keeping up
                {1_500L, flush},                     // a little late: not held, the target's tail stays
                {2_000L, flush}, {2_300L, flush},    // continuous: beyond 2 s the wait grows from the flush window
                {3_000L, Duration.ofSeconds(1)},
                {20_000L, Duration.ofSeconds(18)},
                {62_000L, max},
                {600_000L, max}};                    // far behind: the bound
        for (Object[] c : cases) {
            assertThat(holds.nanos((Long) c[0])).as("behind %s ms", c[0]).isEqualTo(((Duration) c[1]).toNanos());
        }
        assertThat(new Coalescer.Holds(flush, Duration.ofSeconds(2), Duration.ZERO).nanos(600_000L)).as("0 turns it off").isEqualTo(flush.toNanos());
    }
}
