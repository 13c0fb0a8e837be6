package io.tally.testsupport.truth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.cosmos.CosmosException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.loadgen.rules.RuleSet;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.model.BucketDocument;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.testsupport.truth.GroundTruthJudge.Difference;
import io.tally.testsupport.truth.GroundTruthJudge.Field;
import io.tally.testsupport.truth.GroundTruthJudge.Outcome;
import io.tally.testsupport.truth.GroundTruthJudge.Verdict;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;

/** The judge's classification on documents held in memory: no Cosmos. */
class GroundTruthJudgeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final RuleSet RULES = RuleSet.parse("""
            rules:
              - name: spend
                entity: customerId
                value: amount
                aggregations: [sum, count, max]
                units: [hour]
                retention: PT48H
              - name: spend-sku
                entity: customerId
                qualifier: sku
                value: amount
                aggregations: [sum, count, min, max]
                units: [day]
                retention: P35D
            """, "test");
    // 2026-03-05T10:20:00Z: hour index 492_418, day index 20_517.
    private static final Instant T = Instant.parse("2026-03-05T10:20:00Z");
    private static final String HOUR = "d|c1|spend|hour|492418", DAY = "d|c1|spend-sku:s1|day|20517";

    /** Two events of customer c1 (12.3400 and 0.66): one hour bucket of `spend`, one day bucket of `spend-sku:s1`. */
    private static GroundTruth truth() {
        GroundTruth t = new GroundTruth(RULES, Duration.ofMinutes(5));
        t.onEvent(event("t1", "12.3400"), T);
        t.onEvent(event("t2", "0.66"), T);
        t.onEvent(event("t1", "12.3400"), T); // a duplicate: counts once
        return t;
    }

    private static TransactionEvent event(String id, String amount) {
        return new TransactionEvent(id, T, "d", "c1", null, null, "s1", "m", "WEB", new BigDecimal(amount), "EUR", "APPROVED", Map.of());
    }

    /** The documents the pipeline writes for {@link #truth()}, numbers as Cosmos returns them (doubles). */
    private static List<JsonNode> correct() throws Exception {
        return new ArrayList<>(List.of(
                JSON.readTree("""
                        {"pk":"d|c1","id":"spend|hour|492418","grade":"spend","unit":"hour","bucket":"2026-03-05T10:00:00Z",
                         "sum":13.0,"count":2,"max":12.34,"ver":2,"ttl":172800,"updatedAt":"2026-03-05T10:20:01Z","_etag":"x"}"""),
                JSON.readTree("""
                        {"pk":"d|c1","id":"spend-sku:s1|day|20517","grade":"spend-sku:s1","unit":"day","bucket":"2026-03-05T00:00:00Z",
                         "sum":13,"count":2,"min":0.66,"max":12.34,"ver":2,"ttl":3024000,"updatedAt":"2026-03-05T10:20:01Z"}""")));
    }

    private static ObjectNode doc(List<JsonNode> docs, int i) {
        return (ObjectNode) docs.get(i);
    }

    @Test
    void theGroundTruthBecomesTheDocumentsThePipelineMustWrite() {
        Map<String, BucketDocument> expected = GroundTruthJudge.of(truth()).expected();
        assertThat(expected).containsOnlyKeys(HOUR, DAY);
        BucketDocument hour = expected.get(HOUR);
        assertThat(hour.grade()).isEqualTo("spend");
        assertThat(hour.unit()).isEqualTo("hour");
        assertThat(hour.bucket()).isEqualTo("2026-03-05T10:00:00Z");
        assertThat(hour.sum()).isEqualByComparingTo("13.0000");
        assertThat(hour.count()).isEqualTo(2);
        assertThat(hour.min()).as("not an aggregation of the rule").isNull();
        assertThat(hour.max()).isEqualByComparingTo("12.34");
        assertThat(hour.ver()).as("one delta per counted event").isEqualTo(2);
        assertThat(hour.ttl()).isEqualTo(48 * 3600);
        assertThat(expected.get(DAY).grade()).isEqualTo("spend-sku:s1");
        assertThat(expected.get(DAY).min()).isEqualByComparingTo("0.66");
        assertThat(GroundTruthJudge.bucketStart("month", 674)).isEqualTo(Instant.parse("2026-03-01T00:00:00Z"));
    }

    @Test
    void documentsThatMatchInEveryFieldAreEqualWhateverTheirDecimalScaleOrSystemFields() throws Exception {
        Verdict v = GroundTruthJudge.of(truth()).judge(correct());
        assertThat(v.outcome()).as(v.toString()).isEqualTo(Outcome.EQUAL);
        assertThat(v.differing()).isZero();
        assertThat(v.summary()).isEqualTo("all 2 buckets equal the ground truth");
    }

    @Test
    void everyFieldIsCompared() throws Exception {
        GroundTruthJudge judge = GroundTruthJudge.of(truth());
        Map<String, Object> wrongValues = Map.of("grade", "spend-x", "unit", "day", "bucket", "2026-03-05T11:00:00Z", "sum", 13.01,
                "count", 3, "max", 12.35, "ver", 3, "ttl", 86_400);
        for (Map.Entry<String, Object> f : wrongValues.entrySet()) {
            List<JsonNode> docs = correct();
            doc(docs, 0).set(f.getKey(), JSON.valueToTree(f.getValue()));
            Verdict v = judge.judge(docs);
            assertThat(v.outcome()).as(f.getKey()).isEqualTo(Outcome.WRONG);
            assertThat(v.differences()).as(f.getKey()).singleElement()
                    .satisfies(d -> assertThat(d.field().json()).isEqualTo(f.getKey()))
                    .satisfies(d -> assertThat(d.key()).isEqualTo(HOUR));
            assertThat(v.wrongBuckets()).isEqualTo(1);
        }
    }

    @Test
    void anAggregationTheRuleDoesNotListMustBeAbsentAndOneItListsPresent() throws Exception {
        List<JsonNode> docs = correct();
        doc(docs, 0).put("min", 0.66);
        doc(docs, 1).remove("min");
        doc(docs, 1).put("count", "2");
        Verdict v = GroundTruthJudge.of(truth()).judge(docs);
        assertThat(v.differences()).containsExactly(
                new Difference(DAY, Field.COUNT, "2", "2"), // text, not a number
                new Difference(DAY, Field.MIN, "0.66", "absent"),
                new Difference(HOUR, Field.MIN, "absent", "0.66"));
        assertThat(v.wrongBuckets()).isEqualTo(2);
        assertThat(v.toString()).contains(HOUR + " min: expected absent, stored 0.66");
    }

    @Test
    void anAggregationTheRuleDoesNotListIsLeftOutNotNull() throws Exception {
        List<JsonNode> docs = correct();
        doc(docs, 0).putNull("min");
        doc(docs, 1).putNull("min");
        Verdict v = GroundTruthJudge.of(truth()).judge(docs);
        assertThat(v.differences()).containsExactly(
                new Difference(DAY, Field.MIN, "0.66", "null"),
                new Difference(HOUR, Field.MIN, "absent", "null"));
    }

    @Test
    void missingAndExtraDocumentsAreReportedByKey() throws Exception {
        List<JsonNode> docs = correct();
        docs.remove(1);
        docs.add(JSON.readTree("{\"pk\":\"d|c9\",\"id\":\"spend|hour|1\",\"count\":1}"));
        Verdict v = GroundTruthJudge.of(truth()).judge(docs);
        assertThat(v.outcome()).isEqualTo(Outcome.WRONG);
        assertThat(v.missing()).containsExactly(DAY);
        assertThat(v.extra()).containsExactly("d|c9|spend|hour|1");
        assertThat(v.differences()).isEmpty();
        assertThat(v.differing()).isEqualTo(2);
        assertThat(v.summary()).isEqualTo("2 of 2 buckets differ from the ground truth: 1 missing, 0 wrong, 1 extra; 2 documents stored");
        assertThat(v.toString()).contains("missing:\n    " + DAY).contains("extra:\n    d|c9|spend|hour|1");
    }

    @Test
    void anIgnoredDomainsExtraDocumentsAreNotCountedButItsExpectedOnesAre() throws Exception {
        List<JsonNode> docs = correct();
        docs.add(JSON.readTree("{\"pk\":\"probe|p1\",\"id\":\"spend|hour|1\",\"count\":1}"));
        assertThat(GroundTruthJudge.of(truth()).judge(docs).extra()).containsExactly("probe|p1|spend|hour|1");
        assertThat(GroundTruthJudge.of(truth()).ignoringExtraInDomain("probe").judge(docs).equal()).isTrue();
        doc(docs, 0).put("count", 5);
        assertThat(GroundTruthJudge.of(truth()).ignoringExtraInDomain("d").judge(docs).differences())
                .extracting(Difference::field).containsExactly(Field.COUNT);
    }

    @Test
    void aRestrictedJudgeExpectsOnlyItsSelectionAndCountsTheRestAsExtra() throws Exception {
        GroundTruthJudge hoursOnly = GroundTruthJudge.of(truth()).restrictedTo((pk, id) -> id.contains("|hour|"));
        List<JsonNode> docs = correct();
        assertThat(hoursOnly.judge(docs).extra()).containsExactly(DAY);
        docs.remove(1);
        assertThat(hoursOnly.judge(docs).equal()).isTrue();
    }

    @Test
    void aDecimalBeyondADoublesPrecisionEqualsItsNearestDouble() throws Exception {
        BucketDocument precise = new BucketDocument("p", "g|hour|1", "g", "hour", "1970-01-01T01:00:00Z",
                new BigDecimal("123456789.123456789"), 1, null, null, 1, null, null);
        GroundTruthJudge judge = GroundTruthJudge.ofDocuments(List.of(precise));
        JsonNode asStored = JSON.readTree("{\"pk\":\"p\",\"id\":\"g|hour|1\",\"grade\":\"g\",\"unit\":\"hour\","
                + "\"bucket\":\"1970-01-01T01:00:00Z\",\"sum\":123456789.123456789,\"count\":1,\"ver\":1}");
        assertThat(asStored.get("sum").isDouble()).isTrue();
        assertThat(judge.judge(List.of(asStored)).equal()).isTrue();
        ((ObjectNode) asStored).put("sum", 123456789.12345);
        assertThat(judge.judge(List.of(asStored)).differences()).extracting(Difference::field).containsExactly(Field.SUM);
        ((ObjectNode) asStored).put("sum", 123456789.123456789).put("ttl", 60);
        assertThat(judge.judge(List.of(asStored)).differences()).as("no ttl expected")
                .containsExactly(new Difference("p|g|hour|1", Field.TTL, "absent", "60"));
    }

    @Test
    void aReadThatFailsIsRetriedAndAVerdictComesFromTheFirstOneThatWorks() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        List<JsonNode> docs = correct();
        Verdict v = GroundTruthJudge.of(truth()).withReadRetries(5, Duration.ofMillis(1)).judge(() -> {
            if (calls.incrementAndGet() == 1) throw new Unavailable();
            if (calls.get() == 2) throw Exceptions.propagate(new TimeoutException());
            return docs;
        });
        assertThat(v.equal()).isTrue();
        assertThat(v.attempts()).isEqualTo(3);
        assertThat(v.summary()).endsWith("(read on attempt 3)");
    }

    @Test
    void aContainerThatCannotBeReadIsNeverJudgedWrong() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Verdict v = GroundTruthJudge.of(truth()).withReadRetries(4, Duration.ofMillis(1)).judge(() -> {
            calls.incrementAndGet();
            throw new Unavailable();
        });
        assertThat(calls).hasValue(4);
        assertThat(v.outcome()).isEqualTo(Outcome.COULD_NOT_READ);
        assertThat(v.wrong()).isFalse();
        assertThat(v.equal()).isFalse();
        assertThat(v.differing()).isZero();
        assertThat(v.missing()).isEmpty();
        assertThat(v.toString()).startsWith("could not read the container in 4 attempts (CosmosException 503:0")
                .contains("nothing known about the 2 expected buckets");
    }

    @Test
    void aFailureThatIsNotTheStoresIsNotMistakenForOne() {
        GroundTruthJudge judge = GroundTruthJudge.of(truth()).withReadRetries(3, Duration.ofMillis(1));
        assertThatThrownBy(() -> judge.judge(() -> {
            throw new IllegalArgumentException("a bug");
        })).isInstanceOf(IllegalArgumentException.class);
    }

    /** What the SDK throws for a 503; its constructors are only open to subclasses. */
    private static final class Unavailable extends CosmosException {
        Unavailable() {
            super(503, "service unavailable");
        }
    }
}
