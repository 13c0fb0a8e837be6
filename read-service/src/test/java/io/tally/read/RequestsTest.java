package io.tally.read;

import static io.tally.read.PercentDecoderTest.enc;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.BucketId;
import io.tally.model.GradeId;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class RequestsTest {
    static final Instant NOW = Instant.parse("2026-11-21T10:30:00Z");
    static final GradeRules GRADES = GradeRules.load(GradeRules.BUILTIN_DEFAULT);
    static final RulesView RULES = RulesView.ofFile(GRADES, GradeRules.BUILTIN_DEFAULT);
    final Requests requests = new Requests(new ReadSettings.Api(Duration.ofSeconds(1), 100, 64, 50, 10), Clock.fixed(NOW, ZoneOffset.UTC));

    static String q(String query) {
        return "/x?" + query;
    }

    @Test
    void lastNUnitsEndsWithTheCurrentBucket() {
        Requests.Range r = requests.rollup(RULES, "demo%7Cc-1", q("grade=spend-per-customer&unit=hour&last=72"));
        assertThat(r.pk()).isEqualTo("demo|c-1");
        assertThat(r.end()).isEqualTo(TimeUnit.HOUR.bucketIndex(NOW) + 1);
        assertThat(r.buckets()).isEqualTo(72);
        assertThat(r.toIso()).isEqualTo("2026-11-21T11:00:00Z");
        assertThat(r.fromIso()).isEqualTo("2026-11-18T11:00:00Z");
    }

    @Test
    void fromIsFlooredToItsBucketAndToIsExclusive() {
        Requests.Range r = requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&from=2026-11-21T08:15:00Z&to=2026-11-21T10:00:00Z"));
        assertThat(r.fromIso()).isEqualTo("2026-11-21T08:00:00Z");
        assertThat(r.toIso()).isEqualTo("2026-11-21T10:00:00Z");
        assertThat(r.buckets()).isEqualTo(2);
        Requests.Range partial = requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&from=2026-11-21T08:00:00Z&to=2026-11-21T10:00:01Z"));
        assertThat(partial.buckets()).isEqualTo(3);
    }

    @Test
    void toDefaultsToNow() {
        Requests.Range r = requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=day&from=2026-11-20T00:00:00Z"));
        assertThat(r.toIso()).isEqualTo("2026-11-22T00:00:00Z");
    }

    @Test
    void qualifierGradesBecomeTheirGradeId() {
        assertThat(requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer-sku&qualifier=sku-3&unit=day&last=7")).gradeId())
                .isEqualTo("spend-per-customer-sku:sku-3");
        assertThat(requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer-sku%3Asku-3&unit=day&last=7")).gradeId())
                .isEqualTo("spend-per-customer-sku:sku-3");
    }

    @Test
    void tokensRoundTripAndAreBoundToTheirQuery() {
        Requests.RangePage first = requests.rangePage(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&from=2026-11-21T00:00:00Z&limit=5"));
        String token = Requests.token(first.range(), "{\"cosmos\":\"token\"}");
        Requests.RangePage next = requests.rangePage(RULES, "d%7Ce",
                q("grade=spend-per-customer&unit=hour&from=2026-11-21T00:00:00Z&limit=5&continuation=" + token));
        assertThat(next.continuation()).hasValue("{\"cosmos\":\"token\"}");
        assertThatThrownBy(() -> requests.rangePage(RULES, "d%7Cother",
                q("grade=spend-per-customer&unit=hour&from=2026-11-21T00:00:00Z&continuation=" + token)))
                .isInstanceOf(Problem.class).hasMessageContaining("different query");
        assertThatThrownBy(() -> requests.rangePage(RULES, "d%7Ce",
                q("grade=spend-per-customer&unit=hour&from=2026-11-21T00:00:00Z&continuation=" + token.substring(3))))
                .isInstanceOf(Problem.class).hasMessageContaining("not a token");
        assertThatThrownBy(() -> requests.rangePage(RULES, "d%7Ce",
                q("grade=spend-per-customer&unit=hour&from=2026-11-21T00:00:00Z&continuation=" + "A".repeat(5000))))
                .isInstanceOf(Problem.class).hasMessageContaining("too long");
    }

    @Test
    void aMinuteRangeResumesAtTheMinuteItsTokenNamesWithinTheRange() {
        GradeRules minutes = GradeRules.parse("""
                rules:
                  - name: clicks
                    entity: customerId
                    value: one
                    aggregations: [count]
                    units: [minute]
                    retention: P1D
                """, "test");
        RulesView rules = RulesView.ofFile(minutes, "test");
        Requests r = new Requests(new ReadSettings.Api(Duration.ofSeconds(1), 100, 64, 50, 10), Clock.fixed(NOW, ZoneOffset.UTC));
        String query = "grade=clicks&unit=minute&from=2026-11-21T10:00:00Z&to=2026-11-21T10:30:00Z";
        Requests.Range range = r.rangePage(rules, "d%7Ce", q(query)).range();
        assertThat(range.nestedMinutes()).isTrue();
        long next = range.first() + 7;
        Requests.RangePage page = r.rangePage(rules, "d%7Ce", q(query + "&continuation=" + Requests.token(range, "minute:" + next)));
        assertThat(page.continuation().flatMap(c -> {
            java.util.OptionalLong n = BucketStore.nextMinute(c);
            return n.isPresent() ? Optional.of(n.getAsLong()) : Optional.empty();
        })).hasValue(next);
        for (String c : new String[] {"minute:x", "minute:" + range.end(), "minute:" + (range.first() - 1), "{\"cosmos\":\"token\"}"}) {
            assertThatThrownBy(() -> r.rangePage(rules, "d%7Ce", q(query + "&continuation=" + Requests.token(range, c))))
                    .as(c).isInstanceOf(Problem.class).hasMessageContaining("not a token");
        }
    }

    @Test
    void pointIdsAreChecked() {
        assertThat(requests.point(RULES, "d%7Ce", "spend%7Chour%7C42")).isEqualTo(new Requests.Point("d|e", "spend|hour|42", GradeStatus.UNRECORDED));
        assertThat(requests.point(RULES, "d%7Ce", "g%3Asku%7Cx%7Cday%7C42").id()).isEqualTo("g:sku|x|day|42");
        assertBad(() -> requests.point(RULES, "d%7Ce", "spend%7Chour%7C4x2"), "whole bucket index");
        assertBad(() -> requests.point(RULES, "d%7Ce", "spend%7Cweek%7C1"), "unknown unit in id");
        assertBad(() -> requests.point(RULES, "d%7Ce", "hour%7C1"), "id must look like {grade}|{unit}|{bucketIndex}");
        assertBad(() -> requests.point(RULES, "d%7Ce", "spend%ZZ"), "URL-encoded");
        assertBad(() -> requests.point(RULES, "%7Ce", "spend%7Chour%7C1"), "pk must look like");
        assertBad(() -> requests.point(RULES, "d%7C", "spend%7Chour%7C1"), "pk must look like");
        assertBad(() -> requests.point(RULES, "d%7C" + "e".repeat(70), "spend%7Chour%7C1"), "longer than 64");
        // Found by ReadFuzzIT: a malformed escape in the query string was a 500.
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&last=%2")), "query string is not correctly URL-encoded");
        assertBad(() -> requests.rangePage(RULES, "d%7Ce", q("grade=%zz")), "query string is not correctly URL-encoded");
        assertBad(() -> requests.features("d%7Ce", q("at=%")), "query string is not correctly URL-encoded");
    }

    @Test
    void withARecordAGradeItDoesNotCountIsUnknownEverywhere() {
        RulesView record = RulesView.ofRecord(RulesFixtures.second());
        assertBad(() -> requests.point(record, "d%7Ce", "orders%7Chour%7C42"), "unknown grade 'orders'");
        assertBad(() -> requests.rollup(record, "d%7Ce", q("grade=orders&unit=hour&last=3")), "unknown grade 'orders'");
        assertBad(() -> requests.rangePage(record, "d%7Ce", q("grade=orders&unit=hour&from=2026-11-21T00:00:00Z")), "unknown grade 'orders'");
        assertBad(() -> requests.point(record, "d%7Ce", "spend%7Cmonth%7C42"), "grade spend is not kept in unit month");
        assertThat(requests.point(record, "d%7Ce", "spend%7Cday%7C42").status())
                .isEqualTo(record.status("spend", TimeUnit.DAY).orElseThrow());
        Requests.Range day = requests.rollup(record, "d%7Ce", q("grade=spend&unit=day&last=3"));
        assertThat(day.status().recorded().since()).isEqualTo(2);
        assertThat(requests.point(RulesView.ofFile(RulesFixtures.file(), "f"), "d%7Ce", "gone%7Chour%7C42").status())
                .as("without a record a point read looks any grade up, as it always did").isEqualTo(GradeStatus.UNRECORDED);
    }

    @Test
    void theRulesRouteTakesNoParameters() {
        requests.rules("/v1/rules");
        assertBad(() -> requests.rules(q("generation=2")), "unknown parameter 'generation' (allowed: none)");
    }

    @ParameterizedTest
    @MethodSource("io.tally.read.PercentDecoderTest#awkward")
    void anyQualifierValueAndEntityKeyIsAccepted(String value) {
        String pk = "d|e-" + value;
        String grade = "spend-per-customer-sku:" + value;
        Requests.Point p = requests.point(RULES, enc(pk), enc(grade + "|day|42"));
        assertThat(p).isEqualTo(new Requests.Point(pk, grade + "|day|42", GradeStatus.UNRECORDED));
        // Parsed from the right: unit and index never hold a bar, the grade may.
        assertThat(BucketId.parse(p.id())).isEqualTo(new BucketId(grade, TimeUnit.DAY, 42));
        assertThat(GradeId.parse(grade).qualifier()).hasValue(value);

        Requests.Range byParameter = requests.rollup(RULES, enc(pk), q("grade=spend-per-customer-sku&qualifier=" + enc(value) + "&unit=day&last=7"));
        assertThat(byParameter.pk()).isEqualTo(pk);
        assertThat(byParameter.gradeId()).isEqualTo(grade);
        assertThat(requests.rangePage(RULES, enc(pk), q("grade=" + enc(grade) + "&unit=day&from=2026-11-20T00:00:00Z")).range().gradeId())
                .isEqualTo(grade);
        assertThat(requests.features(enc(pk), q("")).pk()).isEqualTo(pk);
    }

    @Test
    void keysKeepTheirRealLimits() {
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer-sku&qualifier=&unit=day&last=7")), "qualifier must not be empty");
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer-sku&qualifier=a%0Ab&unit=day&last=7")), "control characters");
        assertBad(() -> requests.point(RULES, "d%7Ce%7F", "spend%7Chour%7C1"), "control characters");
        assertBad(() -> requests.point(RULES, "d%7Ce", "spend%C3%7Chour%7C1"), "not correctly URL-encoded");
        // The limit is in UTF-8 bytes, as ingest-app's: 16 emoji are 64 bytes, within a limit of 64; a 17th is over it.
        String emoji = "😀".repeat(16);
        assertThat(requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer-sku&qualifier=" + enc(emoji) + "&unit=day&last=7")).gradeId())
                .endsWith(emoji);
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer-sku&qualifier=" + enc(emoji + "😀") + "&unit=day&last=7")),
                "longer than 64 bytes");
        assertBad(() -> requests.point(RULES, "d%7Ce", enc("é".repeat(33)) + "%7Chour%7C1"), "id is longer than 64 bytes");
    }

    @Test
    void rangeLimits() {
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&last=101")), "from 1 to 100");
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&last=-1")), "from 1 to 100");
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&from=2026-11-01T00:00:00Z")), "at most 100");
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&from=2026-11-21T10:00:00Z&to=2026-11-21T10:00:00Z")),
                "before");
        assertBad(() -> requests.rollup(RULES, "d%7Ce", q("grade=spend-per-customer&unit=hour&last=1&last=2")), "more than once");
        assertBad(() -> requests.features("d%7Ce", q("at=2026-11-21")), "ISO-8601");
    }

    @Test
    void messagesDoNotEchoLongInput() {
        String longGrade = "g".repeat(70);
        assertThatThrownBy(() -> requests.rollup(RULES, "d%7Ce", q("grade=" + longGrade + "&unit=hour&last=1")))
                .isInstanceOf(Problem.class).hasMessageContaining("longer than 64");
        assertThatThrownBy(() -> requests.rollup(RULES, "d%7Ce", q("grade=" + "g".repeat(50) + "&unit=hour&last=1")))
                .isInstanceOf(Problem.class).hasMessageNotContaining("g".repeat(50)).hasMessageContaining("...");
    }

    static void assertBad(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String detail) {
        assertThatThrownBy(call).isInstanceOfSatisfying(Problem.class, p -> {
            assertThat(p.status).isEqualTo(400);
            assertThat(p.detail).contains(detail);
        });
    }
}
