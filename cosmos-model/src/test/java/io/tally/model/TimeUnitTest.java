package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class TimeUnitTest {
    @Test
    void eventsExactlyOnABoundaryStartTheNewBucket() {
        Instant boundary = Instant.parse("2024-03-01T00:00:00Z");
        assertThat(TimeUnit.HOUR.bucketIndex(boundary)).isEqualTo(TimeUnit.HOUR.bucketIndex(boundary.minusMillis(1)) + 1);
        assertThat(TimeUnit.DAY.bucketStart(TimeUnit.DAY.bucketIndex(boundary))).isEqualTo(boundary);
        assertThat(TimeUnit.MONTH.bucketStart(TimeUnit.MONTH.bucketIndex(boundary))).isEqualTo(boundary);
    }

    @Test
    void leapDayBelongsToFebruary() {
        Instant leapDay = Instant.parse("2024-02-29T23:59:59.999Z");
        assertThat(TimeUnit.MONTH.bucketStart(TimeUnit.MONTH.bucketIndex(leapDay))).isEqualTo(Instant.parse("2024-02-01T00:00:00Z"));
        assertThat(TimeUnit.DAY.bucketStart(TimeUnit.DAY.bucketIndex(leapDay))).isEqualTo(Instant.parse("2024-02-29T00:00:00Z"));
    }

    @Test
    void indexesCountWholeUnitsSinceTheEpochAndRoundDownBeforeIt() {
        assertThat(TimeUnit.HOUR.bucketIndex(Instant.EPOCH)).isZero();
        assertThat(TimeUnit.MONTH.bucketIndex(Instant.parse("1971-01-15T00:00:00Z"))).isEqualTo(12);
        assertThat(TimeUnit.HOUR.bucketIndex(Instant.EPOCH.minusSeconds(1))).isEqualTo(-1);
        assertThat(TimeUnit.MINUTE.bucketStart(-1)).isEqualTo(Instant.EPOCH.minusSeconds(60));
    }

    @Test
    void keysFollowTheDocumentModel() {
        BucketKey k = new BucketKey("shop", "c-1", "spend", TimeUnit.HOUR, 42);
        assertThat(k.pk()).isEqualTo("shop|c-1");
        assertThat(k.id()).isEqualTo("spend|hour|42");
        assertThat(k.updateKey()).isEqualTo("shop|c-1|spend|hour|42");
    }
}
