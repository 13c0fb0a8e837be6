package io.tally.read;

import static io.tally.read.GradeStatusTest.FILLED;
import static io.tally.read.GradeStatusTest.PENDING;
import static io.tally.read.RulesFixtures.SEAM;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.Aggregate;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.rules.state.RulesState;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A bucket that may lack history says {@code "complete": false}; a complete one is answered byte for byte as before
 * rules records, and values of an older version are not answered.
 */
class CompletenessTest {
    static final long SEAM_DAY = TimeUnit.DAY.bucketIndex(SEAM);

    static BucketDocument day(long index) {
        return new BucketDocument("d|e", "spend|day|" + index, "spend", "day", TimeUnit.DAY.bucketStart(index).toString(),
                new BigDecimal("5.00"), 1, null, null, 1, 60, null);
    }

    static String text(Object body) {
        return new String(BucketRoutes.Answer.json(200, body).body(), StandardCharsets.UTF_8);
    }

    @Test
    void aBucketBeforeThePendingSeamIsMarkedAndOthersAreAnsweredAsBefore() {
        assertThat(text(BucketRoutes.bucket(day(SEAM_DAY), PENDING))).endsWith(",\"complete\":false}");
        assertThat(text(BucketRoutes.bucket(day(SEAM_DAY + 1), PENDING))).isEqualTo(text(day(SEAM_DAY + 1)));
        assertThat(text(BucketRoutes.bucket(day(SEAM_DAY), FILLED))).isEqualTo(text(day(SEAM_DAY)));
        assertThat(text(BucketRoutes.bucket(day(SEAM_DAY), GradeStatus.UNRECORDED))).isEqualTo(text(day(SEAM_DAY))).doesNotContain("complete");
    }

    @Test
    void aRollUpIsIncompleteWhenItsWindowStartsBeforeThePendingSeam() {
        Requests.Range before = new Requests.Range("d|e", null, "spend", TimeUnit.DAY, SEAM_DAY - 3, SEAM_DAY + 2, PENDING);
        assertThat(text(BucketRoutes.rollupBody(before, List.of()))).as("no bucket found: the window decides").endsWith(",\"complete\":false}");
        Requests.Range after = new Requests.Range("d|e", null, "spend", TimeUnit.DAY, SEAM_DAY + 1, SEAM_DAY + 2, PENDING);
        assertThat(text(BucketRoutes.rollupBody(after, List.of(day(SEAM_DAY + 1))))).doesNotContain("complete");
        Requests.Range filled = new Requests.Range("d|e", null, "spend", TimeUnit.DAY, SEAM_DAY - 3, SEAM_DAY + 2, FILLED);
        assertThat(text(BucketRoutes.rollupBody(filled, List.of(day(SEAM_DAY))))).doesNotContain("complete");
    }

    @Test
    void anHoursNestedMinutesCountOnlyWhenTheHourHoldsTheCurrentVersion() {
        long hour = TimeUnit.HOUR.bucketIndex(SEAM);
        GradeStatus since2 = new GradeStatus(new RulesState.Grade("clicks", TimeUnit.MINUTE, "v", 2, null, RulesState.Backfill.NONE));
        Requests.Range r = new Requests.Range("d|e", null, "clicks", TimeUnit.MINUTE, hour * 60, hour * 60 + 60, since2);
        Map<Integer, Aggregate> minutes = Map.of(3, new Aggregate(null, 2, null, null));
        String start = TimeUnit.HOUR.bucketStart(hour).toString();
        assertThat(new BucketStore.HourRow(start, 60, null, RulesState.verFloor(1) + 2, minutes).minutes(r, hour * 60)).isEmpty();
        assertThat(new BucketStore.HourRow(start, 60, null, RulesState.verFloor(2) + 2, minutes).minutes(r, hour * 60)).hasSize(1);
    }
}
