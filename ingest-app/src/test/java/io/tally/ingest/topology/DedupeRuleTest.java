package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DedupeRuleTest {
    private static final long H = Duration.ofDays(7).toMillis();
    private final DedupeRule rule = new DedupeRule(Duration.ofMillis(H));

    @Test
    void aSightingWithinTheHorizonIsADuplicateAndOneBeyondItIsNot() {
        assertThat(rule.isDuplicate(1_000, 1_000 + H)).isTrue();
        assertThat(rule.isDuplicate(1_000 + H, 1_000)).as("out of order, earlier record second").isTrue();
        assertThat(rule.isDuplicate(1_000, 1_001 + H)).isFalse();
    }

    @Test
    void theCellsLookedUpAlwaysIncludeTheCellOfEverySightingWithinTheHorizon() {
        Random rnd = new Random(7);
        for (int i = 0; i < 100_000; i++) {
            long first = rnd.nextLong(1L << 42) - (1L << 41);
            long now = first + rnd.nextLong(2 * H + 1) - H; // within the horizon, either side
            long cell = rule.cellStart(first);
            assertThat(cell).isBetween(rule.firstCell(now), rule.lastCell(now));
            assertThat((cell - rule.firstCell(now)) % rule.cellWidthMs()).isZero();
        }
        assertThat((rule.lastCell(0) - rule.firstCell(0)) / rule.cellWidthMs() + 1).as("point lookups per record").isLessThanOrEqualTo(3);
    }

    @Test
    void theStoreKeepsACellLongEnoughForItsLastDuplicate() {
        long first = 5 * H - 1; // filed under the cell starting at 4 H, almost a cell earlier
        long lastDuplicate = first + H;
        assertThat(rule.cellStart(first)).isGreaterThanOrEqualTo(lastDuplicate - rule.retention().toMillis());
    }
}
