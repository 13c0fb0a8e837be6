package io.tally.ingest.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.config.ConfigException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReplaySettingsTest {
    static final Instant NOW = Instant.parse("2026-11-21T12:34:56.789Z");

    private static ReplaySettings load(String... args) {
        return ReplaySettings.load(args, Map.of(), NOW);
    }

    @Test
    void shortFlagsInBothFormsStandForTheirKeys() {
        ReplaySettings s = load("--from", "2026-10-01", "--to=2026-10-02T06:00:00Z", "--rules", "spend-per-customer, orders-per-email",
                "--container", "rebuilt", "--application-id=my-replay", "--kafka.bootstrap.servers=broker:9092");
        assertThat(s.range()).isEqualTo(new ReplayRange(Instant.parse("2026-10-01T00:00:00Z"), Instant.parse("2026-10-02T06:00:00Z")));
        assertThat(s.rules()).containsExactlyInAnyOrder("spend-per-customer", "orders-per-email");
        assertThat(s.ingest().cosmos().container()).isEqualTo("rebuilt");
        assertThat(s.ingest().bootstrapServers()).isEqualTo("broker:9092");
        assertThat(s.applicationId()).isEqualTo("my-replay");
    }

    @Test
    void toDefaultsToNowMinusTheLateBoundAndTheApplicationIdNamesTheRange() {
        ReplaySettings s = load("--from=2026-10-01T00:00:00Z");
        assertThat(s.range().to()).isEqualTo(Instant.parse("2026-10-17T12:34:56Z")); // 35 days before NOW, whole seconds
        assertThat(s.applicationId()).isEqualTo("tally-replay-20261001T000000Z-20261017T123456Z");
        assertThat(s.rules()).as("all rules").isEmpty();
        assertThat(s.ingest().cosmos().container()).as("the live container").isEqualTo("buckets");
    }

    @Test
    void aToStillOpenToLateEventsIsRefusedUnlessAskedFor() {
        assertThatThrownBy(() -> load("--from=2026-11-21T08:00:00Z", "--to=2026-11-21T10:00:00Z"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("--to 2026-11-21T10:00:00Z is later than 2026-10-17T12:34:56Z")
                .hasMessageContaining("--include-open-buckets");
        ReplaySettings open = load("--from=2026-11-21T08:00:00Z", "--to=2026-11-21T10:00:00Z", "--include-open-buckets");
        assertThat(open.range().to()).isEqualTo(Instant.parse("2026-11-21T10:00:00Z"));
        assertThat(load("--from=2026-11-21T08:00:00Z", "--to=2026-11-21T10:00:00Z", "--ingest.late-bound.ms=3600000").range().to())
                .as("a shorter late bound settles sooner").isEqualTo(Instant.parse("2026-11-21T10:00:00Z"));
    }

    @Test
    void theFutureAnEmptyRangeAndUnreadableTimesAreRefused() {
        assertThatThrownBy(() -> load("--from=2026-11-21T08:00:00Z", "--to=2026-11-22T00:00:00Z", "--include-open-buckets"))
                .hasMessageContaining("is in the future");
        assertThatThrownBy(() -> load("--from=2026-10-02", "--to=2026-10-01")).hasMessageContaining("the range is empty");
        assertThatThrownBy(() -> load("--from=yesterday")).hasMessageContaining("--from 'yesterday' is not a time");
        assertThatThrownBy(() -> load("--to=2026-10-01")).hasMessageContaining("replay.from: required");
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        assertThatThrownBy(() -> load("--from=2026-10-01", "--replay.progress-interval.ms=-5", "--ingest.nonsense=1"))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems())
                        .anyMatch(p -> p.startsWith("replay.progress-interval.ms"))
                        .anyMatch(p -> p.startsWith("ingest.nonsense")));
    }

    @Test
    void splitKeepsValuesWithTheirFlags() {
        List<String> replay = new ArrayList<>(), ingest = new ArrayList<>();
        ReplaySettings.split(new String[] {"--from", "2026-10-01", "--include-open-buckets", "--cosmos.database", "db",
                "--replay.write-timeout.ms=5"}, replay, ingest);
        assertThat(replay).containsExactly("--replay.from=2026-10-01", "--replay.include-open-buckets=true",
                "--replay.write-timeout.ms=5");
        assertThat(ingest).containsExactly("--cosmos.database=db");
        assertThat(ReplaySettings.ruleNames("all")).isEmpty();
        assertThat(ReplaySettings.ruleNames("a,,b ")).isEqualTo(Set.of("a", "b"));
        assertThat(load("--from=2026-10-01", "--replay.write-timeout.ms=5").writeTimeout()).isEqualTo(Duration.ofMillis(5));
    }
}
