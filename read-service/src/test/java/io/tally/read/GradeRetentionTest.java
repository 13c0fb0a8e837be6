package io.tally.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.BucketDocument;
import io.tally.model.BucketId;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class GradeRetentionTest {
    // orders-per-email keeps 7 days, spend-per-customer 35: one entity bucket can hold both, and lives 35 days.
    private final GradeRetention retention = new GradeRetention(GradeRules.load(GradeRules.BUILTIN_DEFAULT));
    private static final long HOUR = 500_000;
    private static final Instant END = TimeUnit.HOUR.bucketStart(HOUR + 1);

    static BucketDocument bucket(String grade) {
        return new BucketDocument("d|e", BucketId.format(grade, TimeUnit.HOUR, HOUR), grade, "hour",
                TimeUnit.HOUR.bucketStart(HOUR).toString(), null, 2, null, null, 2, 3_024_000, null);
    }

    @Test
    void aGradeIsAnsweredUntilItsBucketEndedItsOwnRetentionAgo() {
        assertThat(retention.expired(bucket("orders-per-email"), END.plus(Duration.ofDays(7)))).isFalse();
        assertThat(retention.expired(bucket("orders-per-email"), END.plus(Duration.ofDays(7)).plusSeconds(1))).isTrue();
        assertThat(retention.expired(bucket("spend-per-customer"), END.plus(Duration.ofDays(8)))).as("35 days").isFalse();
        assertThat(retention.expired(bucket("spend-per-customer-sku:sku-1"), END.plus(Duration.ofDays(36)))).isTrue();
    }

    @Test
    void aGradeOfAnUnknownRuleLivesAsLongAsItsDocument() {
        assertThat(retention.expired(bucket("retired-rule"), END.plus(Duration.ofDays(3650)))).isFalse();
        assertThat(retention.withTtl(bucket("retired-rule")).ttl()).isEqualTo(3_024_000);
    }

    @Test
    void aBucketCarriesItsOwnRulesTtlNotItsDocuments() {
        assertThat(retention.withTtl(bucket("orders-per-email")).ttl()).isEqualTo(7 * 86_400);
        assertThat(retention.withTtl(bucket("orders-per-email")).count()).isEqualTo(2);
        assertThat(retention.withTtl(bucket("orders-per-email")).sum()).isNull();
    }
}
