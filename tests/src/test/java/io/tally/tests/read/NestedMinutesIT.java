package io.tally.tests.read;

import static io.tally.tests.read.ReadServiceFixture.TTL_SECONDS;
import static io.tally.tests.read.ReadServiceFixture.bucket;
import static io.tally.tests.read.ReadServiceFixture.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.model.Aggregate;
import io.tally.model.BucketDocument;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import io.tally.model.EntityBucketLayout;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unqualified minute grades live in their hour document ({@code minutes}) while it holds at most
 * {@link EntityBucketLayout#MAX_INLINE_MINUTE_GRADES} of them, else in minute documents, as they all did before minutes
 * nested. Three entities hold the same minutes of one grade across an hour boundary, each in one layout: nested in both
 * hours; spilled in the first hour (past the bound) and nested in the next; and the older layout (minute documents, an
 * hour document without {@code minutes}, and no hour document at all for the next hour). Point read, range (paged and
 * not), roll-up and feature vector answer the same for all three.
 */
@ExtendWith(LocalStackExtension.class)
class NestedMinutesIT {
    static final String RULE = "spend-per-minute";
    static final String SKU_RULE = "spend-per-sku-minute";
    static final String NESTED = "mins|nested";
    static final String SPILLED = "mins|spilled";
    static final String LEGACY = "mins|legacy";
    /** Count-only minute rules that fill the spilled entity's first hour past the bound: 5 × 60 minute grades. */
    static final List<String> FILLERS = List.of("clicks-a", "clicks-b", "clicks-c", "clicks-d", "clicks-e");
    static final String HOUR_SUM = "999.9900";

    static ReadServiceFixture f;
    /** The first of the two hours; the minutes with grades are {@link #minutes()}. */
    static long hour;

    static List<Long> minutes() {
        long first = hour * 60;
        return List.of(first + 40, first + 45, first + 50, first + 55, first + 59, first + 60, first + 63, first + 67);
    }

    static String sum(long minute) {
        return (minute % 1000) + ".2500";
    }

    static long count(long minute) {
        return minute % 7 + 1;
    }

    static String rules() {
        StringBuilder y = new StringBuilder("rules:\n");
        y.append(rule(RULE, null, "[sum, count, min, max]", "[minute, hour]"));
        y.append(rule(SKU_RULE, "sku", "[sum, count]", "[minute]"));
        FILLERS.forEach(r -> y.append(rule(r, null, "[count]", "[minute]")));
        return y.toString();
    }

    static String rule(String name, String qualifier, String aggregations, String units) {
        return "  - name: " + name + "\n    entity: customerId\n" + (qualifier == null ? "" : "    qualifier: " + qualifier + "\n")
                + "    value: " + (aggregations.contains("sum") ? "amount" : "one") + "\n    aggregations: " + aggregations
                + "\n    units: " + units + "\n    retention: P35D\n";
    }

    @BeforeAll
    static void start(LocalCosmos cosmos) throws Exception {
        Path rules = Files.createTempFile("nested-minutes-rules", ".yaml");
        Files.writeString(rules, rules());
        rules.toFile().deleteOnExit();
        f = new ReadServiceFixture(cosmos, Map.of(), "--read.rules-file=" + rules);
        hour = TimeUnit.HOUR.bucketIndex(Instant.now()) - 5;

        List<BucketDocument> grades = new ArrayList<>();
        for (String pk : List.of(NESTED, SPILLED)) {
            String entity = pk.substring(pk.indexOf('|') + 1);
            for (long m : minutes()) {
                grades.add(bucket("mins", entity, RULE, TimeUnit.MINUTE, m, sum(m), count(m), "0.0100", sum(m)));
            }
            grades.add(bucket("mins", entity, RULE, TimeUnit.HOUR, hour, HOUR_SUM, 50, "0.0100", "100.0000"));
            grades.add(bucket("mins", entity, SKU_RULE + ":sku-1", TimeUnit.MINUTE, hour * 60 + 45, "7.0000", 2, null, null));
        }
        for (String filler : FILLERS) {
            LongStream.range(hour * 60, hour * 60 + 60)
                    .forEach(m -> grades.add(bucket("mins", "spilled", filler, TimeUnit.MINUTE, m, "0", 1, null, null)));
        }
        f.write(grades);
        writeLegacy();

        JsonNode spilledHour = f.container.readItem("hour|" + hour, new PartitionKey(SPILLED), JsonNode.class)
                .block(Duration.ofSeconds(30)).getItem();
        assertThat(spilledHour.has("minutes") && spilledHour.get("minutes").isNull()).as("the spilled hour says minutes: null").isTrue();
        JsonNode nestedHour = f.container.readItem("hour|" + hour, new PartitionKey(NESTED), JsonNode.class)
                .block(Duration.ofSeconds(30)).getItem();
        assertThat(nestedHour.get("minutes").get(RULE).size()).isEqualTo(5);
    }

    /**
     * As written before minutes nested: every minute in its minute document, the first hour's document without a
     * {@code minutes} field, and no document for the second hour (a rule kept only in minutes made none).
     */
    static void writeLegacy() {
        List<ObjectNode> docs = new ArrayList<>();
        for (long m : minutes()) {
            EntityBucket d = EntityBucket.main(LEGACY, TimeUnit.MINUTE, m, TimeUnit.MINUTE.bucketStart(m).toString());
            d.addGrade(RULE, new Aggregate(new BigDecimal(sum(m)), count(m), new BigDecimal("0.0100"), new BigDecimal(sum(m))), TTL_SECONDS);
            if (m == hour * 60 + 45) d.addQualified(SKU_RULE, "sku-1", new Aggregate(new BigDecimal("7.0000"), 2, null, null), TTL_SECONDS);
            d.stamp(Instant.now().toString());
            docs.add(EntityBucketJson.tree(d));
        }
        EntityBucket h = EntityBucket.main(LEGACY, TimeUnit.HOUR, hour, TimeUnit.HOUR.bucketStart(hour).toString());
        h.addGrade(RULE, new Aggregate(new BigDecimal(HOUR_SUM), 50, new BigDecimal("0.0100"), new BigDecimal("100.0000")), TTL_SECONDS);
        h.stamp(Instant.now().toString());
        ObjectNode hourTree = EntityBucketJson.tree(h);
        hourTree.remove("minutes");
        docs.add(hourTree);
        for (ObjectNode d : docs) f.container.upsertItem(d, new PartitionKey(LEGACY), null).block(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        if (f != null) f.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {NESTED, SPILLED, LEGACY})
    void aPointReadAnswersEveryMinute(String pk) {
        for (long m : minutes()) {
            var a = f.get("/v1/buckets/" + enc(pk) + "/" + enc(RULE + "|minute|" + m));
            assertThat(a.status()).as(pk + " minute " + m + ": " + a.body()).isEqualTo(200);
            JsonNode j = a.json();
            assertThat(j.get("id").asText()).isEqualTo(RULE + "|minute|" + m);
            assertThat(j.get("bucket").asText()).isEqualTo(TimeUnit.MINUTE.bucketStart(m).toString());
            assertThat(j.get("sum").decimalValue()).isEqualByComparingTo(sum(m));
            assertThat(j.get("count").asLong()).isEqualTo(count(m));
        }
        assertThat(f.get("/v1/buckets/" + enc(pk) + "/" + enc(RULE + "|minute|" + (hour * 60 + 41))).status())
                .as("a minute without grades").isEqualTo(404);
        assertThat(f.get("/v1/buckets/" + enc(pk) + "/" + enc(RULE + "|minute|" + (hour * 60 + 120))).status())
                .as("a minute of an hour without documents").isEqualTo(404);
        var sku = f.get("/v1/buckets/" + enc(pk) + "/" + enc(SKU_RULE + ":sku-1|minute|" + (hour * 60 + 45)));
        assertThat(sku.status()).as(sku.body()).isEqualTo(200);
        assertThat(sku.json().get("sum").decimalValue()).isEqualByComparingTo("7");
        var hourRead = f.get("/v1/buckets/" + enc(pk) + "/" + enc(RULE + "|hour|" + hour));
        assertThat(hourRead.json().get("sum").decimalValue()).isEqualByComparingTo(HOUR_SUM);
    }

    @ParameterizedTest
    @ValueSource(strings = {NESTED, SPILLED, LEGACY})
    void aRangeAcrossAnHourBoundaryAnswersEveryMinuteInOrderAndPagesWalkIt(String pk) {
        String query = "/v1/buckets/" + enc(pk) + "?grade=" + RULE + "&unit=minute&from=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 30)
                + "&to=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 70);
        var all = f.get(query);
        assertThat(all.status()).as(all.body()).isEqualTo(200);
        assertThat(all.json().has("continuation")).isFalse();
        List<String> ids = ids(all.json().get("buckets"));
        assertThat(ids).containsExactlyElementsOf(minutes().stream().map(m -> RULE + "|minute|" + m).toList());
        for (JsonNode b : all.json().get("buckets")) {
            long m = Long.parseLong(b.get("id").asText().substring(b.get("id").asText().lastIndexOf('|') + 1));
            assertThat(b.get("sum").decimalValue()).isEqualByComparingTo(sum(m));
            assertThat(b.get("count").asLong()).isEqualTo(count(m));
            assertThat(b.get("unit").asText()).isEqualTo("minute");
        }

        for (int limit : new int[] {1, 3, 5, 7, 8}) {
            List<JsonNode> walked = new ArrayList<>();
            String continuation = null;
            int pages = 0;
            do {
                var page = f.get(query + "&limit=" + limit + (continuation == null ? "" : "&continuation=" + enc(continuation)));
                assertThat(page.status()).as(page.body()).isEqualTo(200);
                JsonNode j = page.json();
                assertThat(j.get("buckets").size()).as("limit " + limit).isBetween(1, limit);
                j.get("buckets").forEach(walked::add);
                continuation = j.has("continuation") ? j.get("continuation").asText() : null;
                pages++;
            } while (continuation != null && pages < 20);
            assertThat(pages).as("limit " + limit).isEqualTo((minutes().size() + limit - 1) / limit);
            assertThat(walked).as("limit " + limit).containsExactlyElementsOf(all.json().get("buckets"));
        }

        var midHour = f.get("/v1/buckets/" + enc(pk) + "?grade=" + RULE + "&unit=minute&from="
                + TimeUnit.MINUTE.bucketStart(hour * 60 + 45).plusSeconds(30) + "&to=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 63));
        assertThat(ids(midHour.json().get("buckets"))).containsExactly(RULE + "|minute|" + (hour * 60 + 45),
                RULE + "|minute|" + (hour * 60 + 50), RULE + "|minute|" + (hour * 60 + 55), RULE + "|minute|" + (hour * 60 + 59),
                RULE + "|minute|" + (hour * 60 + 60));

        var sku = f.get("/v1/buckets/" + enc(pk) + "?grade=" + SKU_RULE + "&qualifier=sku-1&unit=minute&from="
                + TimeUnit.MINUTE.bucketStart(hour * 60) + "&to=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 120) + "&limit=1");
        assertThat(ids(sku.json().get("buckets"))).containsExactly(SKU_RULE + ":sku-1|minute|" + (hour * 60 + 45));
    }

    @Test
    void aContinuationThatIsNotOursOrOfAnotherQueryIs400() {
        String query = "?grade=" + RULE + "&unit=minute&from=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 30)
                + "&to=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 70) + "&limit=2";
        var first = f.get("/v1/buckets/" + enc(NESTED) + query);
        String token = first.json().get("continuation").asText();
        assertThat(f.get("/v1/buckets/" + enc(SPILLED) + query + "&continuation=" + enc(token)).status()).isEqualTo(400);
        assertThat(f.get("/v1/buckets/" + enc(NESTED) + query + "&continuation=" + enc(token.substring(2))).status()).isEqualTo(400);
        String forged = Base64.getUrlEncoder().withoutPadding().encodeToString(
                new String(Base64.getUrlDecoder().decode(token)).replace("minute:", "minute:x").getBytes());
        var bad = f.get("/v1/buckets/" + enc(NESTED) + query + "&continuation=" + enc(forged));
        assertThat(bad.status()).as(bad.body()).isEqualTo(400);
        assertThat(bad.body()).contains("not a token");
    }

    @ParameterizedTest
    @ValueSource(strings = {NESTED, SPILLED, LEGACY})
    void aRollUpAddsTheMinutesOfBothHours(String pk) {
        var r = f.get("/v1/rollups/" + enc(pk) + "?grade=" + RULE + "&unit=minute&from=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 30)
                + "&to=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 70));
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        JsonNode j = r.json();
        BigDecimal sum = minutes().stream().map(m -> new BigDecimal(sum(m))).reduce(BigDecimal.ZERO, BigDecimal::add);
        assertThat(j.get("bucketsFound").asInt()).isEqualTo(minutes().size());
        assertThat(j.get("sum").decimalValue()).isEqualByComparingTo(sum);
        assertThat(j.get("count").asLong()).isEqualTo(minutes().stream().mapToLong(NestedMinutesIT::count).sum());
        assertThat(j.get("min").decimalValue()).isEqualByComparingTo("0.01");
        assertThat(j.get("max").decimalValue()).isEqualByComparingTo(minutes().stream().map(m -> new BigDecimal(sum(m)))
                .max(BigDecimal::compareTo).orElseThrow());

        var firstHour = f.get("/v1/rollups/" + enc(pk) + "?grade=" + RULE + "&unit=minute&from=" + TimeUnit.HOUR.bucketStart(hour)
                + "&to=" + TimeUnit.HOUR.bucketStart(hour + 1));
        assertThat(firstHour.json().get("bucketsFound").asInt()).isEqualTo(5);
    }

    @ParameterizedTest
    @ValueSource(strings = {NESTED, SPILLED, LEGACY})
    void theFeatureVectorHoldsTheCurrentMinuteOnly(String pk) {
        long minute = hour * 60 + 45;
        var a = f.get("/v1/features/" + enc(pk) + "?at=" + TimeUnit.MINUTE.bucketStart(minute).plusSeconds(30));
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        JsonNode g = a.json().get("grades");
        assertThat(fieldNames(g.get(RULE))).containsExactlyInAnyOrder("minute", "hour");
        assertThat(g.get(RULE).get("minute").get("id").asText()).isEqualTo(RULE + "|minute|" + minute);
        assertThat(g.get(RULE).get("minute").get("sum").decimalValue()).isEqualByComparingTo(sum(minute));
        assertThat(g.get(RULE).get("hour").get("sum").decimalValue()).isEqualByComparingTo(HOUR_SUM);
        assertThat(g.get(SKU_RULE + ":sku-1").get("minute").get("sum").decimalValue()).isEqualByComparingTo("7");
        if (pk.equals(SPILLED)) {
            FILLERS.forEach(r -> assertThat(g.get(r).get("minute").get("id").asText()).isEqualTo(r + "|minute|" + minute));
        }
        assertThat(a.json().get("truncated").asBoolean()).isFalse();

        var quiet = f.get("/v1/features/" + enc(pk) + "?at=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 41));
        assertThat(quiet.status()).as(quiet.body()).isEqualTo(200);
        JsonNode q = quiet.json().get("grades");
        assertThat(fieldNames(q.get(RULE))).as("no minute of the hour but the current one").containsExactly("hour");
        assertThat(q.has(SKU_RULE + ":sku-1")).isFalse();

        var nextHour = f.get("/v1/features/" + enc(pk) + "?at=" + TimeUnit.MINUTE.bucketStart(hour * 60 + 63));
        assertThat(fieldNames(nextHour.json().get("grades").get(RULE))).containsExactly("minute");
        assertThat(nextHour.json().get("grades").get(RULE).get("minute").get("sum").decimalValue()).isEqualByComparingTo(sum(hour * 60 + 63));
    }

    static List<String> ids(JsonNode buckets) {
        List<String> out = new ArrayList<>();
        buckets.forEach(b -> out.add(b.get("id").asText()));
        return out;
    }

    static List<String> fieldNames(JsonNode n) {
        List<String> out = new ArrayList<>();
        if (n != null) n.fieldNames().forEachRemaining(out::add);
        return out;
    }
}
