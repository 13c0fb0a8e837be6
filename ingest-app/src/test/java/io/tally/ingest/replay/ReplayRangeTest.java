package io.tally.ingest.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.rules.GradeRules;
import io.tally.model.TimeUnit;
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
        assertThat(sku.selects("spend-per-customer-sku:sku-3")).isTrue();
        assertThat(sku.selects("spend-per-customer")).isFalse();
        assertThat(RuleSelection.of(rules, Set.of()).selects("orders-per-email")).as("default: every rule").isTrue();
    }
}
