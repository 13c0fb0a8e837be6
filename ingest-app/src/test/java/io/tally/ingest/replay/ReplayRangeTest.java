package io.tally.ingest.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.rules.GradeRules;
import io.tally.model.Aggregate;
import io.tally.model.EntityBucket;
import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReplayRangeTest {
    final ReplayRange range = new ReplayRange(Instant.parse("2026-11-20T00:00:00Z"), Instant.parse("2026-11-20T03:00:00Z"));

    @Test
    void onlyBucketsWhollyInsideTheRangeBelongToIt() {
        long first = TimeUnit.HOUR.bucketIndex(range.from());
        assertThat(range.containsBucket(TimeUnit.HOUR, first)).as("starts at from").isTrue();
        assertThat(range.containsBucket(TimeUnit.HOUR, first + 2)).as("ends at to").isTrue();
        assertThat(range.containsBucket(TimeUnit.HOUR, first - 1)).isFalse();
        assertThat(range.containsBucket(TimeUnit.HOUR, first + 3)).isFalse();
        assertThat(range.containsBucket(TimeUnit.DAY, TimeUnit.DAY.bucketIndex(range.from()))).as("straddles to").isFalse();
        assertThat(range.containsBucket(TimeUnit.MINUTE, TimeUnit.MINUTE.bucketIndex(range.to()) - 1)).isTrue();
        assertThat(range.contains(range.from())).isTrue();
        assertThat(range.contains(range.to())).as("to is exclusive").isFalse();
    }

    @Test
    void timesParseAsInstantsOffsetsOrDates() {
        assertThat(ReplayRange.parseTime("from", "2026-11-20T01:02:03Z")).isEqualTo(Instant.parse("2026-11-20T01:02:03Z"));
        assertThat(ReplayRange.parseTime("from", "2026-11-20T01:00:00+01:00")).isEqualTo(Instant.parse("2026-11-20T00:00:00Z"));
        assertThat(ReplayRange.parseTime("to", " 2026-11-20 ")).isEqualTo(Instant.parse("2026-11-20T00:00:00Z"));
        assertThatThrownBy(() -> ReplayRange.parseTime("to", "2026-11-20 01:00")).hasMessageContaining("--to '2026-11-20 01:00' is not a time");
    }

    @Test
    void unknownRuleNamesAreRefusedListingTheKnownOnes() {
        GradeRules rules = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
        assertThatThrownBy(() -> RuleSelection.of(rules, Set.of("spend-per-customer", "spend-per-cusomer")))
                .hasMessageContaining("unknown rule(s) [spend-per-cusomer]")
                .hasMessageContaining("[spend-per-customer, spend-per-customer-sku, orders-per-email, spend-per-postal-code]");
        RuleSelection sku = RuleSelection.of(rules, Set.of("spend-per-customer-sku"));
        EntityBucket inline = EntityBucket.main("shop|c-1", TimeUnit.DAY, 1, "x");
        inline.addQualified("spend-per-customer-sku", "sku-3", new Aggregate(BigDecimal.ONE, 1, null, null), 60);
        EntityBucket spilled = EntityBucket.main("shop|c-1", TimeUnit.DAY, 2, "x");
        spilled.spill("spend-per-customer-sku", 16);
        EntityBucket other = EntityBucket.main("shop|c-1", TimeUnit.DAY, 3, "x");
        other.addGrade("spend-per-customer", new Aggregate(BigDecimal.ONE, 1, null, null), 60);
        assertThat(sku.selectsAny(inline)).isTrue();
        assertThat(sku.selectsAny(spilled)).as("its values live in pages").isTrue();
        assertThat(sku.selectsAny(other)).isFalse();
        assertThat(RuleSelection.of(rules, Set.of()).selectsAny(other)).as("default: every rule").isTrue();
    }
}
