package io.tally.read;

import static io.tally.read.RulesFixtures.SEAM;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.TimeUnit;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesState.Backfill;
import io.tally.rules.state.RulesState.Grade;
import org.junit.jupiter.api.Test;

class GradeStatusTest {
    static final GradeStatus PENDING = new GradeStatus(new Grade("spend", TimeUnit.DAY, "v", 2, SEAM, Backfill.PENDING));
    static final GradeStatus FILLED = new GradeStatus(new Grade("spend", TimeUnit.DAY, "v", 2, SEAM, Backfill.COMPLETE));

    @Test
    void aDocumentHoldsTheGradeFromTheGenerationThatStartedCountingIt() {
        assertThat(PENDING.holds(RulesState.verFloor(2))).isTrue();
        assertThat(PENDING.holds(RulesState.verFloor(3) + 17)).isTrue();
        assertThat(PENDING.holds(RulesState.verFloor(2) - 1)).as("generation 1, however many updates").isFalse();
        assertThat(PENDING.holds(42)).as("written before generations").isFalse();
        assertThat(new GradeStatus(new Grade("spend", TimeUnit.HOUR, "v", 0, null, Backfill.NONE)).holds(42)).isTrue();
        assertThat(GradeStatus.UNRECORDED.holds(0)).isTrue();
    }

    @Test
    void onlyBucketsOfAPendingGradeStartingBeforeItsSeamAreIncomplete() {
        assertThat(PENDING.incomplete("2026-11-02T00:00:00Z")).as("the day holding the seam").isTrue();
        assertThat(PENDING.incomplete(SEAM.minusSeconds(1))).isTrue();
        assertThat(PENDING.incomplete(SEAM.toString())).isFalse();
        assertThat(FILLED.incomplete("2026-11-02T00:00:00Z")).as("history counted in").isFalse();
        assertThat(GradeStatus.UNRECORDED.incomplete("1970-01-01T00:00:00Z")).isFalse();
    }
}
