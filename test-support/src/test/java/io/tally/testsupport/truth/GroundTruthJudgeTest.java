package io.tally.testsupport.truth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.azure.cosmos.CosmosException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.loadgen.rules.RuleSet;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.model.BucketDocument;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import io.tally.model.EntityBucketLayout;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.testsupport.cosmos.EntityBuckets;
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
import java.util.TreeMap;
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
    /** The entity buckets (documents) holding them. */
    private static final String HOUR_DOC = "d|c1|hour|492418", DAY_DOC = "d|c1|day|20517";
    private static final int SKUS = EntityBucketLayout.MAX_INLINE_QUALIFIER_VALUES + 6;

    /** Two events of customer c1 (12.3400 and 0.66): one hour bucket of `spend`, one day bucket of `spend-sku:s1`. */
    private static GroundTruth truth() {
        GroundTruth t = new GroundTruth(RULES, Duration.ofMinutes(5));
        t.onEvent(event("t1", "12.3400"), T);
        t.onEvent(event("t2", "0.66"), T);
        t.onEvent(event("t1", "12.3400"), T); // a duplicate: counts once
        return t;
    }

    private static TransactionEvent event(String id, String amount) {
        return event(id, amount, "s1");
    }

    private static TransactionEvent event(String id, String amount, String sku) {
        return event(id, amount, sku, T);
    }

    private static TransactionEvent event(String id, String amount, String sku, Instant time) {
        return new TransactionEvent(id, time, "d", "c1", null, null, sku, "m", "WEB", new BigDecimal(amount), "EUR", "APPROVED", Map.of());
    }

    /**
     * The documents as Cosmos holds them: the fixtures spell each grade as an object of named fields (easy to change in
     * a test), under {@code grades}, {@code qualified} or an hour's {@code minutes}, and this turns every grade into the stored {@code [count, sum, min, max]}, each decimal the string of the
     * number written, an absent or null field a null, trailing nulls left out. Anything else stays as it is written.
     */
    private static List<JsonNode> stored(List<? extends JsonNode> docs) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode d : docs) {
            ObjectNode copy = d.deepCopy();
            for (String map : List.of("grades", "qualified", "minutes")) {
                JsonNode grades = copy.get(map);
                if (grades == null || !grades.isObject()) continue;
                if (map.equals("grades")) asArrays((ObjectNode) grades);
                else grades.forEach(values -> { if (values.isObject()) asArrays((ObjectNode) values); });
            }
            out.add(copy);
        }
        return out;
    }

    private static void asArrays(ObjectNode grades) {
        grades.fieldNames().forEachRemaining(name -> {
            JsonNode g = grades.get(name);
            if (!g.isObject()) return;
            ArrayNode a = JSON.createArrayNode();
            a.add(g.get("count"));
            for (String f : List.of("sum", "min", "max")) {
                JsonNode v = g.get(f);
                if (v == null || v.isNull()) a.addNull();
                else a.add(v.isNumber() ? v.decimalValue().toPlainString() : v.asText());
            }
            while (a.size() > 1 && a.get(a.size() - 1).isNull()) a.remove(a.size() - 1);
            grades.set(name, a);
        });
    }

    /** The documents the pipeline writes for {@link #truth()}, grades spelled as objects ({@link #stored}). */
    private static List<JsonNode> correct() throws Exception {
        return new ArrayList<>(List.of(
                JSON.readTree("""
                        {"pk":"d|c1","id":"hour|492418","unit":"hour","bucket":"2026-03-05T10:00:00Z","ver":2,"ttl":172800,
                         "updatedAt":"2026-03-05T10:20:01Z","_etag":"x",
                         "grades":{"spend":{"sum":13.0,"count":2,"max":12.34}},"qualified":{},"spilled":{}}"""),
                JSON.readTree("""
                        {"pk":"d|c1","id":"day|20517","unit":"day","bucket":"2026-03-05T00:00:00Z","ver":2,"ttl":3024000,
                         "updatedAt":"2026-03-05T10:20:01Z","grades":{},
                         "qualified":{"spend-sku":{"s1":{"sum":13,"count":2,"min":0.66,"max":12.34}}},"spilled":{}}""")));
    }

    private static ObjectNode doc(List<JsonNode> docs, int i) {
        return (ObjectNode) docs.get(i);
    }

    /** The hour document's one grade, `spend`. */
    private static ObjectNode spend(List<JsonNode> docs) {
        return (ObjectNode) docs.get(0).path("grades").path("spend");
    }

    /** The day document's one qualified value, `spend-sku:s1`. */
    private static ObjectNode s1(List<JsonNode> docs) {
        return (ObjectNode) docs.get(1).path("qualified").path("spend-sku").path("s1");
    }

    // --- a hot customer: more SKUs in a day than a main document keeps inline ---

    private static String sku(int i) {
        return "sku-" + i;
    }

    /** One event of 1.00 for each of {@link #SKUS} SKUs, all in one hour. */
    private static GroundTruth hotTruth() {
        GroundTruth t = new GroundTruth(RULES, Duration.ofMinutes(5));
        for (int i = 0; i < SKUS; i++) t.onEvent(event("h" + i, "1.00", sku(i)), T);
        return t;
    }

    private static ObjectNode value() {
        return JSON.createObjectNode().put("sum", 1.0).put("count", 1).put("min", 1.0).put("max", 1.0);
    }

    private static ObjectNode entity(String id, long ver, int ttl) {
        ObjectNode d = JSON.createObjectNode().put("pk", "d|c1").put("id", id).put("unit", id.startsWith("day") ? "day" : "hour")
                .put("bucket", id.startsWith("day") ? "2026-03-05T00:00:00Z" : "2026-03-05T10:00:00Z").put("ver", ver).put("ttl", ttl);
        d.putObject("grades");
        d.putObject("qualified");
        d.putObject("spilled");
        return d;
    }

    private static int pageOf(String sku) {
        return EntityBucketLayout.pageOf(sku, EntityBucketLayout.SPILL_PAGES);
    }

    private static String pageId(int page) {
        return "day|20517|spend-sku|" + page;
    }

    /**
     * What the pipeline writes for {@link #hotTruth()}, built by hand: the hour document, the day's main document that
     * names `spend-sku` spilled (its ver counts every event), and one page per hash value holding its SKUs.
     */
    private static Map<String, ObjectNode> spilled() {
        Map<String, ObjectNode> docs = new TreeMap<>();
        ObjectNode hour = entity("hour|492418", SKUS, 172_800);
        ((ObjectNode) hour.get("grades")).putObject("spend").put("sum", (double) SKUS).put("count", SKUS).put("max", 1.0);
        docs.put(hour.get("id").asText(), hour);
        ObjectNode day = entity("day|20517", SKUS, 3_024_000);
        ((ObjectNode) day.get("spilled")).put("spend-sku", EntityBucketLayout.SPILL_PAGES);
        docs.put(day.get("id").asText(), day);
        for (int i = 0; i < SKUS; i++) {
            ObjectNode page = docs.computeIfAbsent(pageId(pageOf(sku(i))), id -> {
                ObjectNode p = entity(id, 0, 3_024_000).put("rule", "spend-sku").put("page", Integer.parseInt(id.substring(id.lastIndexOf('|') + 1)));
                ((ObjectNode) p.get("qualified")).putObject("spend-sku");
                return p;
            });
            ((ObjectNode) page.get("qualified").get("spend-sku")).set(sku(i), value());
            page.put("ver", page.get("ver").asLong() + 1);
        }
        return docs;
    }

    /** Puts SKU {@code sku}'s value on spill page {@code page}, or takes it off; the page's ver follows. */
    private static void onPage(Map<String, ObjectNode> docs, int page, int sku, boolean put) {
        ObjectNode p = docs.get(pageId(page));
        ObjectNode values = (ObjectNode) p.get("qualified").get("spend-sku");
        if (put) {
            values.set(sku(sku), value());
        } else {
            values.remove(sku(sku));
        }
        p.put("ver", p.get("ver").asLong() + (put ? 1 : -1));
    }

    /** The key (pk|id) of spill page {@code page}. */
    private static String pageKey(int page) {
        return "d|c1|" + pageId(page);
    }

    private static Verdict judgeHot(Map<String, ObjectNode> docs) {
        return GroundTruthJudge.of(hotTruth()).judge(stored(new ArrayList<>(docs.values())));
    }

    private static String key(int sku) {
        return "d|c1|spend-sku:" + sku(sku) + "|day|20517";
    }

    @Test
    void aSpilledRulesValuesAreFoundOnTheirPagesAndCountedByTheMainDocument() {
        Map<String, ObjectNode> docs = spilled();
        assertThat(docs.keySet()).as("the test's own layout: SKUs over several pages").hasSizeGreaterThan(4);
        Verdict v = judgeHot(docs);
        assertThat(v.outcome()).as(v.toString()).isEqualTo(Outcome.EQUAL);
        assertThat(v.expected()).isEqualTo(SKUS + 1);
        assertThat(v.stored()).isEqualTo(docs.size());
    }

    @Test
    void aValueBothInlineAndOnItsPageCountsTwiceAndIsWrong() {
        Map<String, ObjectNode> docs = spilled();
        ObjectNode day = docs.get("day|20517");
        ((ObjectNode) day.get("qualified")).putObject("spend-sku").set(sku(3), value());
        day.put("ver", SKUS + 1);
        Verdict v = judgeHot(docs);
        assertThat(v.outcome()).isEqualTo(Outcome.WRONG);
        assertThat(v.differences()).containsExactly(new Difference(key(3), Field.DOCUMENT,
                "once, in " + pageKey(pageOf(sku(3))), DAY_DOC + " and " + pageKey(pageOf(sku(3)))));
        assertThat(v.missing()).isEmpty();
        assertThat(v.extra()).isEmpty();
    }

    @Test
    void aValueOnTwoPagesCountsTwiceAndTheMainDocumentsVerDisagrees() {
        Map<String, ObjectNode> docs = spilled();
        int home = pageOf(sku(5));
        int other = (home + 1) % EntityBucketLayout.SPILL_PAGES;
        onPage(docs, other, 5, true);
        Verdict v = judgeHot(docs);
        assertThat(v.differences()).containsExactly(
                new Difference(DAY_DOC, Field.VER, String.valueOf(SKUS + 1), String.valueOf(SKUS)),
                new Difference(key(5), Field.DOCUMENT, "once, in " + pageKey(home),
                        pageKey(home) + " and " + pageKey(other)));
        assertThat(v.wrongBuckets()).isEqualTo(2);
    }

    @Test
    void aValueOnAPageItsHashDoesNotNameIsMisplaced() {
        Map<String, ObjectNode> docs = spilled();
        int home = pageOf(sku(7));
        int other = (home + 1) % EntityBucketLayout.SPILL_PAGES;
        onPage(docs, home, 7, false);
        onPage(docs, other, 7, true);
        Verdict v = judgeHot(docs);
        assertThat(v.differences()).containsExactly(new Difference(key(7), Field.DOCUMENT, "once, in " + pageKey(home),
                pageKey(other)));
    }

    @Test
    void aRuleTheMainDocumentNamesSpilledHasNoInlineValues() {
        Map<String, ObjectNode> docs = spilled();
        docs.keySet().removeIf(id -> id.contains("|spend-sku|"));
        ObjectNode inline = ((ObjectNode) docs.get("day|20517").get("qualified")).putObject("spend-sku");
        for (int i = 0; i < SKUS; i++) inline.set(sku(i), value());
        Verdict v = judgeHot(docs);
        assertThat(v.differences()).hasSize(SKUS).allSatisfy(d -> assertThat(d.field()).isEqualTo(Field.DOCUMENT))
                .allSatisfy(d -> assertThat(d.actual()).isEqualTo(DAY_DOC));
    }

    @Test
    void pagesOfARuleTheMainDocumentDoesNotNameSpilledAreMisplaced() {
        Map<String, ObjectNode> docs = spilled();
        ((ObjectNode) docs.get("day|20517").get("spilled")).removeAll();
        Verdict v = judgeHot(docs);
        assertThat(v.differences()).filteredOn(d -> d.field() == Field.DOCUMENT).hasSize(SKUS)
                .allSatisfy(d -> assertThat(d.expected()).isEqualTo("once, in " + DAY_DOC));
        assertThat(v.differences()).as("its pages' events are none of the main document's")
                .contains(new Difference(DAY_DOC, Field.VER, "0", String.valueOf(SKUS)));
    }

    @Test
    void aWrongVerOfAMainDocumentOrAPageIsReportedOnThatDocument() {
        Map<String, ObjectNode> docs = spilled();
        docs.get("day|20517").put("ver", SKUS - 1);
        ObjectNode page = docs.get(pageId(pageOf(sku(0))));
        long pageVer = page.get("ver").asLong();
        page.put("ver", pageVer + 2);
        Verdict v = judgeHot(docs);
        assertThat(v.differences()).containsExactly(
                new Difference(DAY_DOC, Field.VER, String.valueOf(SKUS), String.valueOf(SKUS - 1)),
                new Difference(pageKey(pageOf(sku(0))), Field.VER, String.valueOf(pageVer), String.valueOf(pageVer + 2)));
        assertThat(v.summary()).contains("0 missing, 2 wrong, 0 extra");
    }

    @Test
    void aMissingPageLosesItsValues() {
        Map<String, ObjectNode> docs = spilled();
        ObjectNode page = docs.remove(pageId(pageOf(sku(0))));
        Verdict v = judgeHot(docs);
        assertThat(v.missing()).hasSize(page.get("qualified").get("spend-sku").size()).contains(key(0));
        assertThat(v.differences()).extracting(Difference::key, Difference::field).containsExactly(tuple(DAY_DOC, Field.VER));
    }

    @Test
    void aDocumentsTtlIsTheLongestRetentionOfTheGradesItHoldsSpilledOnesIncluded() throws Exception {
        Map<String, ObjectNode> docs = spilled();
        ObjectNode day = docs.get("day|20517");
        day.put("ttl", 172_800);
        docs.get(pageId(pageOf(sku(0)))).put("ttl", 3_024_001);
        Verdict v = judgeHot(docs);
        assertThat(v.differences()).containsExactly(
                new Difference(DAY_DOC, Field.TTL, "3024000", "172800"),
                new Difference(pageKey(pageOf(sku(0))), Field.TTL, "3024000", "3024001"));

        List<JsonNode> both = correct(); // one document holding a 48 h and a 35 d rule: 35 d
        ObjectNode hour = doc(both, 0);
        ((ObjectNode) hour.get("qualified")).putObject("spend-sku").set("s9", value());
        hour.put("ver", 3);
        GroundTruthJudge judge = GroundTruthJudge.of(truth());
        assertThat(judge.judge(stored(both)).differences()).contains(new Difference(HOUR_DOC, Field.TTL, "3024000", "172800"));
        hour.put("ttl", 3_024_000);
        assertThat(judge.judge(stored(both)).differences()).isEmpty();
        assertThat(judge.judge(stored(both)).extra()).containsExactly("d|c1|spend-sku:s9|hour|492418");
    }

    @Test
    void aSpillPagesRuleAndPageFieldsMatchItsId() {
        Map<String, ObjectNode> docs = spilled();
        ObjectNode page = docs.get(pageId(pageOf(sku(0))));
        page.put("rule", "spend").put("page", 99);
        assertThat(judgeHot(docs).differences()).extracting(Difference::field).containsExactly(Field.RULE, Field.PAGE);
    }

    // --- minutes nested in their hour, and an hour past the bound whose minutes live in minute documents ---

    /** Five unqualified minute rules; `spend` also by the hour, `velocity` kept longest. */
    private static final RuleSet MINUTE_RULES = RuleSet.parse("""
            rules:
              - name: spend
                entity: customerId
                value: amount
                aggregations: [sum, count, max]
                units: [minute, hour]
                retention: PT48H
              - name: velocity
                entity: customerId
                value: one
                aggregations: [count]
                units: [minute]
                retention: P7D
              - name: orders
                entity: customerId
                value: one
                aggregations: [count]
                units: [minute]
                retention: PT48H
              - name: amounts
                entity: customerId
                value: amount
                aggregations: [sum, count]
                units: [minute]
                retention: PT48H
              - name: peaks
                entity: customerId
                value: amount
                aggregations: [count, max]
                units: [minute]
                retention: PT48H
            """, "test");
    private static final List<String> MINUTE_RULE_NAMES = List.of("spend", "velocity", "orders", "amounts", "peaks");
    /** 10:00 (the events at 10:20 and 10:23: 10 minute grades, nested) and 11:00 (one a minute: 300, past 256). */
    private static final long QUIET = 492_418, BUSY = 492_419;
    private static final String QUIET_DOC = "d|c1|hour|" + QUIET, BUSY_DOC = "d|c1|hour|" + BUSY;
    private static final int WEEK = 604_800;

    private static GroundTruth minuteTruth() {
        GroundTruth t = new GroundTruth(MINUTE_RULES, Duration.ofMinutes(5));
        Instant quiet = Instant.ofEpochSecond(QUIET * 3_600);
        t.onEvent(event("q1", "12.3400", "s1", quiet.plusSeconds(20 * 60)), quiet.plusSeconds(20 * 60));
        t.onEvent(event("q2", "0.66", "s1", quiet.plusSeconds(20 * 60 + 30)), quiet.plusSeconds(20 * 60 + 30));
        t.onEvent(event("q3", "5.00", "s1", quiet.plusSeconds(23 * 60)), quiet.plusSeconds(23 * 60));
        for (int m = 0; m < 60; m++) {
            Instant at = Instant.ofEpochSecond(BUSY * 3_600 + m * 60L + 7);
            t.onEvent(event("b" + m, "1.00", "s1", at), at);
        }
        return t;
    }

    /** Rule {@code rule}'s grade of {@code amounts}, spelled as an object of the aggregations it keeps. */
    private static ObjectNode minuteGrade(String rule, double... amounts) {
        ObjectNode g = JSON.createObjectNode().put("count", amounts.length);
        double sum = 0, max = Double.NEGATIVE_INFINITY;
        for (double a : amounts) {
            sum += a;
            max = Math.max(max, a);
        }
        if (rule.equals("spend") || rule.equals("amounts")) g.put("sum", sum);
        if (rule.equals("spend") || rule.equals("peaks")) g.put("max", max);
        return g;
    }

    private static ObjectNode entityBucket(String id, String unit, Instant bucket, long ver, int ttl) {
        ObjectNode d = JSON.createObjectNode().put("pk", "d|c1").put("id", id).put("unit", unit).put("bucket", bucket.toString())
                .put("ver", ver).put("ttl", ttl);
        d.putObject("grades");
        d.putObject("qualified");
        d.putObject("spilled");
        return d;
    }

    private static String minuteId(long hour, int minute) {
        return "minute|" + (hour * 60 + minute);
    }

    private static String minuteKey(String rule, long hour, int minute) {
        return "d|c1|" + rule + "|" + minuteId(hour, minute);
    }

    /**
     * What the pipeline writes for {@link #minuteTruth()}, by hand: the quiet hour nests its 10 minute grades (ver 3 +
     * 15, ttl a week for `velocity`); the busy hour says {@code "minutes": null} and counts its 300 minute grades held by
     * 60 minute documents (ver 60 + 300, ttl a week too).
     */
    private static Map<String, ObjectNode> minuteDocs() {
        Map<String, ObjectNode> docs = new TreeMap<>();
        ObjectNode quiet = entityBucket("hour|" + QUIET, "hour", Instant.ofEpochSecond(QUIET * 3_600), 3 + 15, WEEK);
        ((ObjectNode) quiet.get("grades")).set("spend", minuteGrade("spend", 12.34, 0.66, 5.00));
        ObjectNode nested = quiet.putObject("minutes");
        for (String r : MINUTE_RULE_NAMES) {
            nested.putObject(r).setAll(Map.of("20", minuteGrade(r, 12.34, 0.66), "23", minuteGrade(r, 5.00)));
        }
        docs.put(quiet.get("id").asText(), quiet);
        ObjectNode busy = entityBucket("hour|" + BUSY, "hour", Instant.ofEpochSecond(BUSY * 3_600), 60 + 300, WEEK);
        double[] ones = new double[60];
        java.util.Arrays.fill(ones, 1.00);
        ((ObjectNode) busy.get("grades")).set("spend", minuteGrade("spend", ones));
        busy.putNull("minutes");
        docs.put(busy.get("id").asText(), busy);
        for (int m = 0; m < 60; m++) {
            ObjectNode minute = entityBucket(minuteId(BUSY, m), "minute", Instant.ofEpochSecond((BUSY * 60 + m) * 60), 5, WEEK);
            for (String r : MINUTE_RULE_NAMES) ((ObjectNode) minute.get("grades")).set(r, minuteGrade(r, 1.00));
            docs.put(minute.get("id").asText(), minute);
        }
        return docs;
    }

    private static Verdict judgeMinutes(Map<String, ObjectNode> docs) {
        return GroundTruthJudge.of(minuteTruth()).judge(stored(new ArrayList<>(docs.values())));
    }

    private static ObjectNode nested(Map<String, ObjectNode> docs, String rule) {
        return (ObjectNode) docs.get("hour|" + QUIET).get("minutes").get(rule);
    }

    @Test
    void minutesNestedInTheirHourAndAnHourPastTheBoundWithItsMinutesInMinuteDocumentsAreEqual() {
        Map<String, BucketDocument> expected = GroundTruthJudge.of(minuteTruth()).expected();
        assertThat(expected).hasSize(2 + 5 * 2 + 5 * 60);
        assertThat(expected.get(minuteKey("spend", QUIET, 20)).bucket()).isEqualTo("2026-03-05T10:20:00Z");
        Verdict v = judgeMinutes(minuteDocs());
        assertThat(v.outcome()).as(v.toString()).isEqualTo(Outcome.EQUAL);
        assertThat(v.stored()).isEqualTo(2 + 60);
    }

    @Test
    void anHourPastTheBoundCountsAndOutlivesTheMinuteGradesItMovedOut() {
        Map<String, ObjectNode> docs = minuteDocs();
        docs.get("hour|" + BUSY).put("ver", 60).put("ttl", 172_800);
        assertThat(judgeMinutes(docs).differences()).containsExactly(
                new Difference(BUSY_DOC, Field.VER, "360", "60"),
                new Difference(BUSY_DOC, Field.TTL, String.valueOf(WEEK), "172800"));

        docs.remove("hour|" + BUSY);
        Verdict v = judgeMinutes(docs);
        assertThat(v.missing()).containsExactly("d|c1|spend|hour|" + BUSY);
        assertThat(v.differences()).as("its minutes' first grade creates the hour").containsExactly(
                new Difference(BUSY_DOC, Field.VER, "300", "absent"));
    }

    @Test
    void aMinuteGradeInItsMinuteDocumentWhileTheHourNestsIsMisplaced() {
        Map<String, ObjectNode> docs = minuteDocs();
        ObjectNode moved = (ObjectNode) nested(docs, "velocity").remove("23");
        ObjectNode minute = entityBucket(minuteId(QUIET, 23), "minute", Instant.parse("2026-03-05T10:23:00Z"), 1, WEEK);
        ((ObjectNode) minute.get("grades")).set("velocity", moved);
        docs.put(minute.get("id").asText(), minute);
        Verdict v = judgeMinutes(docs);
        assertThat(v.outcome()).isEqualTo(Outcome.WRONG);
        assertThat(v.differences()).as("the hour still counts it: only the place is wrong").containsExactly(
                new Difference(minuteKey("velocity", QUIET, 23), Field.DOCUMENT, "once, in " + QUIET_DOC,
                        "d|c1|" + minuteId(QUIET, 23)));
        assertThat(v.missing()).isEmpty();
        assertThat(v.extra()).isEmpty();

        nested(docs, "velocity").set("23", moved.deepCopy());
        docs.get("hour|" + QUIET).put("ver", 19);
        assertThat(judgeMinutes(docs).differences()).containsExactly(new Difference(minuteKey("velocity", QUIET, 23), Field.DOCUMENT,
                "once, in " + QUIET_DOC, QUIET_DOC + " and d|c1|" + minuteId(QUIET, 23)));
    }

    @Test
    void aMinuteGradeNestedInAnHourPastTheBoundIsMisplaced() {
        Map<String, ObjectNode> docs = minuteDocs();
        ObjectNode minute = docs.get(minuteId(BUSY, 5));
        ObjectNode busy = docs.get("hour|" + BUSY);
        busy.putObject("minutes").putObject("orders").set("5", ((ObjectNode) minute.get("grades")).remove("orders"));
        minute.put("ver", 4);
        assertThat(judgeMinutes(docs).differences()).containsExactly(new Difference(minuteKey("orders", BUSY, 5), Field.DOCUMENT,
                "once, in d|c1|" + minuteId(BUSY, 5), BUSY_DOC));
    }

    @Test
    void anHoursVerAndTtlCountItsNestedMinutes() {
        Map<String, ObjectNode> docs = minuteDocs();
        docs.get("hour|" + QUIET).put("ver", 17).put("ttl", 172_800);
        Verdict v = judgeMinutes(docs);
        assertThat(v.outcome()).isEqualTo(Outcome.WRONG);
        assertThat(v.differences()).containsExactly(
                new Difference(QUIET_DOC, Field.VER, "18", "17"),
                new Difference(QUIET_DOC, Field.TTL, String.valueOf(WEEK), "172800"));
        assertThat(v.wrongBuckets()).isEqualTo(1);
    }

    @Test
    void aCorruptedNestedMinuteIsWrong() {
        Map<String, ObjectNode> docs = minuteDocs();
        ((ObjectNode) nested(docs, "spend").get("20")).put("sum", 13.01);
        assertThat(judgeMinutes(docs).differences()).extracting(Difference::key, Difference::field)
                .containsExactly(tuple(minuteKey("spend", QUIET, 20), Field.SUM));

        docs = minuteDocs();
        nested(docs, "orders").put("20", "2");
        assertThat(judgeMinutes(docs).differences()).as("not a grade: no count, so the hour's ver misses it too")
                .extracting(Difference::key, Difference::field)
                .containsExactly(tuple(QUIET_DOC, Field.VER), tuple(minuteKey("orders", QUIET, 20), Field.COUNT),
                        tuple(minuteKey("orders", QUIET, 20), Field.VER));

        docs = minuteDocs();
        nested(docs, "peaks").set("07", nested(docs, "peaks").remove("23"));
        Verdict v = judgeMinutes(docs);
        assertThat(v.differences()).contains(new Difference(QUIET_DOC, Field.MINUTES, "peaks: minutes 0 to 59", "peaks: 07"));
        assertThat(v.missing()).containsExactly(minuteKey("peaks", QUIET, 23));

        docs = minuteDocs();
        docs.get("hour|" + QUIET).put("minutes", "spend");
        v = judgeMinutes(docs);
        assertThat(v.differences()).contains(new Difference(QUIET_DOC, Field.MINUTES, "an object or null", "spend"));
        assertThat(v.missing()).hasSize(10);

        docs = minuteDocs();
        ((ObjectNode) docs.get("hour|" + QUIET).get("minutes")).put("velocity", 3);
        assertThat(judgeMinutes(docs).differences())
                .contains(new Difference(QUIET_DOC, Field.MINUTES, "velocity: an object of minutes", "velocity: 3"));

        docs = minuteDocs();
        docs.get(minuteId(BUSY, 0)).putObject("minutes");
        assertThat(judgeMinutes(docs).differences()).as("only an hour's main document nests minutes")
                .containsExactly(new Difference("d|c1|" + minuteId(BUSY, 0), Field.MINUTES, "absent", "{}"));
    }

    @Test
    void theLayoutOfTheAggregationsOwnArithmeticIsJudgedEqual() throws Exception {
        // the judge and the pipeline lay documents out each in their own code: they must agree on a correct store
        for (GroundTruth truth : List.of(minuteTruth(), hotTruth(), truth())) {
            GroundTruthJudge judge = GroundTruthJudge.of(truth);
            List<JsonNode> docs = new ArrayList<>();
            for (EntityBucket d : EntityBuckets.of(judge.expected().values())) docs.add(JSON.readTree(EntityBucketJson.write(d)));
            Verdict v = judge.judge(docs);
            assertThat(v.outcome()).as(v.toString()).isEqualTo(Outcome.EQUAL);
        }
    }

    @Test
    void anHourNestingMinutesNamesItsOwnUnitAndBucket() {
        Map<String, ObjectNode> docs = minuteDocs();
        docs.get("hour|" + QUIET).put("bucket", "2026-03-05T10:20:00Z");
        assertThat(judgeMinutes(docs).differences()).extracting(Difference::key, Difference::field)
                .contains(tuple(QUIET_DOC, Field.BUCKET));
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
        Verdict v = GroundTruthJudge.of(truth()).judge(stored(correct()));
        assertThat(v.outcome()).as(v.toString()).isEqualTo(Outcome.EQUAL);
        assertThat(v.differing()).isZero();
        assertThat(v.summary()).isEqualTo("all 2 buckets equal the ground truth");
    }

    @Test
    void everyFieldIsCompared() throws Exception {
        GroundTruthJudge judge = GroundTruthJudge.of(truth());
        // the document's own fields, and its grade's: each wrong value is one difference, of the grade or of the document
        Map<String, Object> documentFields = Map.of("unit", "day", "bucket", "2026-03-05T11:00:00Z", "ver", 3, "ttl", 86_400);
        Map<String, Object> gradeFields = Map.of("sum", 13.01, "max", 12.35);
        for (Map.Entry<String, Object> f : documentFields.entrySet()) {
            List<JsonNode> docs = correct();
            doc(docs, 0).set(f.getKey(), JSON.valueToTree(f.getValue()));
            Verdict v = judge.judge(stored(docs));
            assertThat(v.outcome()).as(f.getKey()).isEqualTo(Outcome.WRONG);
            assertThat(v.differences()).as(f.getKey()).singleElement()
                    .satisfies(d -> assertThat(d.field().json()).isEqualTo(f.getKey()))
                    .satisfies(d -> assertThat(d.key()).isEqualTo(f.getKey().equals("ver") || f.getKey().equals("ttl") ? HOUR_DOC : HOUR));
            assertThat(v.wrongBuckets()).isEqualTo(1);
        }
        for (Map.Entry<String, Object> f : gradeFields.entrySet()) {
            List<JsonNode> docs = correct();
            spend(docs).set(f.getKey(), JSON.valueToTree(f.getValue()));
            assertThat(judge.judge(stored(docs)).differences()).as(f.getKey()).singleElement()
                    .satisfies(d -> assertThat(d.field().json()).isEqualTo(f.getKey()))
                    .satisfies(d -> assertThat(d.key()).isEqualTo(HOUR));
        }
        List<JsonNode> docs = correct();
        spend(docs).put("count", 3);
        assertThat(judge.judge(stored(docs)).differences()).as("a grade's count is its ver, and its document's ver counts it").containsExactly(
                new Difference(HOUR_DOC, Field.VER, "3", "2"),
                new Difference(HOUR, Field.COUNT, "2", "3"),
                new Difference(HOUR, Field.VER, "2", "3"));
    }

    @Test
    void anAggregationTheRuleDoesNotListMustBeAbsentAndOneItListsPresent() throws Exception {
        List<JsonNode> docs = correct();
        spend(docs).put("min", 0.66);
        s1(docs).remove("min");
        s1(docs).put("count", "2");
        Verdict v = GroundTruthJudge.of(truth()).judge(stored(docs));
        assertThat(v.differences()).containsExactly(
                new Difference(DAY, Field.COUNT, "2", "2"), // text, not a number
                new Difference(DAY, Field.MIN, "0.66", "absent"),
                new Difference(DAY, Field.VER, "2", "2"),
                new Difference(HOUR, Field.MIN, "absent", "0.66"));
        assertThat(v.wrongBuckets()).isEqualTo(2);
        assertThat(v.toString()).contains(HOUR + " min: expected absent, stored 0.66");
    }

    @Test
    void aNullInTheArrayIsAnAggregationNotKept() throws Exception {
        List<JsonNode> docs = correct();
        spend(docs).putNull("min");
        s1(docs).putNull("min");
        Verdict v = GroundTruthJudge.of(truth()).judge(stored(docs));
        assertThat(v.differences()).as("hour: [2, \"13.0\", null, \"12.34\"] is right; day: min kept, stored as null")
                .containsExactly(new Difference(DAY, Field.MIN, "0.66", "absent"));
    }

    @Test
    void missingAndExtraDocumentsAreReportedByKey() throws Exception {
        List<JsonNode> docs = correct();
        docs.remove(1);
        docs.add(JSON.readTree("{\"pk\":\"d|c9\",\"id\":\"hour|1\",\"ver\":1,\"ttl\":172800,\"grades\":{\"spend\":{\"count\":1}}}"));
        Verdict v = GroundTruthJudge.of(truth()).judge(stored(docs));
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
        docs.add(JSON.readTree("{\"pk\":\"probe|p1\",\"id\":\"hour|1\",\"ver\":1,\"ttl\":172800,\"grades\":{\"spend\":{\"count\":1}}}"));
        assertThat(GroundTruthJudge.of(truth()).judge(stored(docs)).extra()).containsExactly("probe|p1|spend|hour|1");
        assertThat(GroundTruthJudge.of(truth()).ignoringExtraInDomain("probe").judge(stored(docs)).equal()).isTrue();
        spend(docs).put("count", 5);
        assertThat(GroundTruthJudge.of(truth()).ignoringExtraInDomain("d").judge(stored(docs)).differences())
                .extracting(Difference::key, Difference::field)
                .containsExactly(tuple(HOUR_DOC, Field.VER), tuple(HOUR, Field.COUNT), tuple(HOUR, Field.VER));
    }

    @Test
    void aRestrictedJudgeExpectsOnlyItsSelectionAndCountsTheRestAsExtra() throws Exception {
        GroundTruthJudge hoursOnly = GroundTruthJudge.of(truth()).restrictedTo((pk, id) -> id.contains("|hour|"));
        List<JsonNode> docs = correct();
        assertThat(hoursOnly.judge(stored(docs)).extra()).containsExactly(DAY);
        docs.remove(1);
        assertThat(hoursOnly.judge(stored(docs)).equal()).isTrue();
    }

    @Test
    void aDecimalIsComparedExactlyAndMustBeStoredAsAString() throws Exception {
        BucketDocument precise = new BucketDocument("p", "g|hour|1", "g", "hour", "1970-01-01T01:00:00Z",
                new BigDecimal("123456789012345678.9"), 1, null, null, 1, null, null);
        GroundTruthJudge judge = GroundTruthJudge.ofDocuments(List.of(precise));
        ObjectNode asStored = (ObjectNode) JSON.readTree("{\"pk\":\"p\",\"id\":\"hour|1\",\"unit\":\"hour\",\"bucket\":\"1970-01-01T01:00:00Z\","
                + "\"ver\":1,\"grades\":{\"g\":[1,\"123456789012345678.90\"]}}");
        assertThat(judge.judge(List.of(asStored)).equal()).as("equal by value: a trailing zero is the same decimal").isTrue();
        ArrayNode g = (ArrayNode) asStored.get("grades").get("g");
        g.set(1, JSON.getNodeFactory().textNode("123456789012345678.8"));
        assertThat(judge.judge(List.of(asStored)).differences()).as("the last digit of 19")
                .containsExactly(new Difference("p|g|hour|1", Field.SUM, "123456789012345678.9", "123456789012345678.8"));
        g.set(1, JSON.getNodeFactory().numberNode(new BigDecimal("123456789012345678.9")));
        assertThat(judge.judge(List.of(asStored)).differences()).as("a JSON number: Cosmos would keep a double")
                .extracting(Difference::field).containsExactly(Field.SUM);
        g.set(1, JSON.getNodeFactory().textNode("123456789012345678.9"));
        asStored.put("ttl", 60);
        assertThat(judge.judge(List.of(asStored)).differences()).as("no ttl expected")
                .containsExactly(new Difference("p|hour|1", Field.TTL, "absent", "60"));
    }

    @Test
    void aReadThatFailsIsRetriedAndAVerdictComesFromTheFirstOneThatWorks() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        List<JsonNode> docs = stored(correct());
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
