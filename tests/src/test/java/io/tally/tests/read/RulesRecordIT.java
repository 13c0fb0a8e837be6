package io.tally.tests.read;

import static io.tally.tests.read.ReadApiIT.assertProblem;
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
import io.tally.model.TimeUnit;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesState.Backfill;
import io.tally.rules.state.RulesState.Grade;
import io.tally.rules.state.RulesState.Retired;
import io.tally.rules.state.RulesStateStore;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.EntityBuckets;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * read-service against the deployment's rules record ({@link RulesState}), written straight into the container with
 * entity buckets of several generations. The record of generation 1 changed every {@code spend} grade (counted from
 * {@link #seam}, history pending), kept {@code orders}, and removed {@code gone}; documents written under generation 0
 * hold the old version's values of {@code spend}, which are not answered anywhere. The tests run in order: the
 * service starts on the rules file, then picks up generation 1, the backfill of one grade, and generation 2, each
 * without a restart.
 *
 * <p>Timeline, by hour: {@code s-1} written under generation 0 (old {@code spend}, with a nested minute), {@code s}
 * (holding the seam, half past) and {@code s+1} under generation 1, and in hour {@code s+2} two minute documents as
 * written before minutes nested, one of each generation; days {@code d-1} (generation 0) and {@code d} (holding the
 * seam, generation 1).
 */
@ExtendWith(LocalStackExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RulesRecordIT {
    static final String PK = "rr|c-1";
    /** An entity whose qualified rule spilled: its day {@code d} lists the pages under generation 1, the pages are older. */
    static final String HOT = "rr|hot";

    static final String SPEND = """
              - name: spend
                entity: customerId
                value: amount
                aggregations: [sum, count]
                units: [minute, hour, day]
                retention: P35D
            """;
    static final String SPEND_SKU = """
              - name: spend-sku
                entity: customerId
                qualifier: sku
                value: amount
                aggregations: [sum, count]
                units: [day]
                retention: P35D
            """;
    static final String ORDERS = """
              - name: orders
                entity: customerId
                value: one
                aggregations: [count]
                units: [hour]
                retention: P35D
            """;
    static final String GONE = ORDERS.replace("orders", "gone");
    /** What generation 1 changed in spend and spend-sku: which events count. */
    static final String APPROVED = "    filter: {field: status, in: [APPROVED]}\n";

    static ReadServiceFixture f;
    static CosmosControl control;
    static RulesStateStore store;
    static Path rulesFile;
    /** The hour holding the seam. */
    static long s;
    /** The day holding the seam. */
    static long d;
    /** Live counting of generation 1's grades starts half past hour {@link #s}. */
    static Instant seam;

    @BeforeAll
    static void start(LocalCosmos cosmos) throws Exception {
        rulesFile = Files.createTempFile("rules-record-it", ".yaml");
        Files.writeString(rulesFile, "rules:\n" + SPEND + SPEND_SKU + ORDERS + GONE);
        rulesFile.toFile().deleteOnExit();
        f = new ReadServiceFixture(cosmos, Map.of(), "--read.rules-file=" + rulesFile, "--read.rules-refresh.ms=200");
        control = cosmos.control();
        store = new RulesStateStore(f.container);
        s = TimeUnit.HOUR.bucketIndex(Instant.now()) - 3;
        seam = TimeUnit.HOUR.bucketStart(s).plus(Duration.ofMinutes(30));
        d = TimeUnit.DAY.bucketIndex(seam);

        write(0, 0, List.of(
                bucket("rr", "c-1", "spend", TimeUnit.HOUR, s - 1, "10.00", 1, null, null),
                bucket("rr", "c-1", "spend", TimeUnit.MINUTE, (s - 1) * 60 + 5, "10.00", 1, null, null),
                bucket("rr", "c-1", "orders", TimeUnit.HOUR, s - 1, "0", 2, null, null),
                bucket("rr", "c-1", "gone", TimeUnit.HOUR, s - 1, "0", 3, null, null),
                bucket("rr", "c-1", "spend", TimeUnit.DAY, d - 1, "50.00", 5, null, null),
                bucket("rr", "c-1", "spend-sku:sku-1", TimeUnit.DAY, d - 1, "7.00", 1, null, null)));
        write(1, 1, List.of(
                bucket("rr", "c-1", "spend", TimeUnit.HOUR, s, "20.00", 1, null, null),
                bucket("rr", "c-1", "spend", TimeUnit.MINUTE, s * 60 + 10, "20.00", 1, null, null),
                bucket("rr", "c-1", "spend", TimeUnit.MINUTE, s * 60 + 40, "1.00", 1, null, null),
                bucket("rr", "c-1", "orders", TimeUnit.HOUR, s, "0", 1, null, null),
                bucket("rr", "c-1", "gone", TimeUnit.HOUR, s, "0", 1, null, null),
                bucket("rr", "c-1", "spend", TimeUnit.HOUR, s + 1, "30.00", 2, null, null),
                bucket("rr", "c-1", "spend", TimeUnit.MINUTE, (s + 1) * 60 + 5, "30.00", 2, null, null),
                bucket("rr", "c-1", "spend", TimeUnit.DAY, d, "60.00", 3, null, null),
                bucket("rr", "c-1", "spend-sku:sku-1", TimeUnit.DAY, d, "8.00", 1, null, null)));
        write(1, 0, skus(d));
        write(1, 1, skus(d - 1));
        minuteDocument(0, (s + 2) * 60 + 1, "4.00", 3);
        minuteDocument(1, (s + 2) * 60 + 2, "5.00", 4);
    }

    /**
     * An unqualified minute grade in its own minute document, as before minutes nested in their hour (hour {@code s+2}
     * has no document), written under {@code generation}.
     */
    static void minuteDocument(long generation, long minute, String sum, long count) {
        EntityBucket doc = EntityBucket.main(PK, TimeUnit.MINUTE, minute, TimeUnit.MINUTE.bucketStart(minute).toString());
        doc.addGrade("spend", new Aggregate(new BigDecimal(sum), count, null, null), ReadServiceFixture.TTL_SECONDS);
        doc.stamp(Instant.now().toString());
        store(doc, generation);
    }

    /** Upserts {@code doc} as last written under {@code generation}: its ver carries the generation above its count. */
    static void store(EntityBucket doc, long generation) {
        ObjectNode tree = EntityBucketJson.tree(doc);
        tree.put("ver", RulesState.verFloor(generation) + doc.ver());
        f.container.upsertItem(tree, new PartitionKey(doc.pk()), null).block(Duration.ofSeconds(30));
    }

    /** 65 values of spend-sku in one day of {@link #HOT}: one past the inline bound, so they live in spill pages. */
    static List<BucketDocument> skus(long day) {
        return IntStream.rangeClosed(1, 65)
                .mapToObj(i -> bucket("rr", "hot", "spend-sku:sku-" + i, TimeUnit.DAY, day, i + ".00", 1, null, null)).toList();
    }

    /**
     * Stores {@code grades} as the pipeline lays them out, main documents as written under generation {@code main},
     * spill pages under {@code pages}.
     */
    static void write(long main, long pages, List<BucketDocument> grades) {
        for (EntityBucket doc : EntityBuckets.of(grades)) store(doc, doc.isPage() ? pages : main);
    }

    static RulesState generation1() {
        String changed = SPEND.replace("    units", APPROVED + "    units");
        String sku = SPEND_SKU.replace("    units", APPROVED + "    units");
        List<Grade> grades = new ArrayList<>();
        for (TimeUnit u : List.of(TimeUnit.MINUTE, TimeUnit.HOUR, TimeUnit.DAY)) {
            grades.add(new Grade("spend", u, "1spend" + u.code().charAt(0) + "00000", 1, seam, Backfill.PENDING));
        }
        grades.add(new Grade("spend-sku", TimeUnit.DAY, "1spendsku000", 1, seam, Backfill.PENDING));
        grades.add(new Grade("orders", TimeUnit.HOUR, "0orders00000", 0, null, Backfill.NONE));
        List<Retired> retired = new ArrayList<>();
        for (TimeUnit u : List.of(TimeUnit.MINUTE, TimeUnit.HOUR, TimeUnit.DAY)) {
            retired.add(new Retired("spend", u, "0spend" + u.code().charAt(0) + "00000", 1, true));
        }
        retired.add(new Retired("spend-sku", TimeUnit.DAY, "0spendsku000", 1, true));
        retired.add(new Retired("gone", TimeUnit.HOUR, "0gone0000000", 1, false));
        return new RulesState(1, Instant.now(), "v1.yaml", "rules:\n" + changed + sku + ORDERS, grades, retired);
    }

    @AfterAll
    static void stop() {
        if (f != null) f.close();
    }

    // --- before any record: the rules file, answered as always ---

    @Test
    @Order(1)
    void withoutARecordTheRulesFileIsAnsweredAndEveryValueAsBefore() {
        JsonNode rules = ok(f.get("/v1/rules"));
        assertThat(rules.get("source").asText()).isEqualTo("file");
        assertThat(rules.get("generation").isNull()).isTrue();
        assertThat(rules.get("rulesOrigin").asText()).isEqualTo(rulesFile.toString());
        assertThat(rules.get("grades")).hasSize(6).allSatisfy(g -> assertThat(g.get("complete").asBoolean()).isTrue());
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.HOUR, s - 1))).get("count").asLong()).isEqualTo(1);
        assertThat(ok(f.get(point(PK, "gone", TimeUnit.HOUR, s - 1))).get("count").asLong()).isEqualTo(3);
        assertThat(f.get(rollup("spend", TimeUnit.HOUR, s - 1, s + 2)).body()).doesNotContain("complete");
        assertThat(f.get("/metrics").body()).contains("tally_read_rules_generation -1.0");
    }

    // --- generation 1 ---

    @Test
    @Order(2)
    void aRecordWrittenLaterIsPickedUpWithoutRestartAndListed() {
        store.create(generation1());
        JsonNode rules = awaitGeneration(f, 1);
        assertThat(rules.get("source").asText()).isEqualTo("record");
        assertThat(rules.get("rulesOrigin").asText()).isEqualTo("v1.yaml");
        assertThat(rules.get("appliedAt").asText()).isNotBlank();
        List<String> grades = new ArrayList<>();
        rules.get("grades").forEach(g -> grades.add(g.get("rule").asText() + "/" + g.get("unit").asText() + " since "
                + g.get("since").asLong() + " " + g.get("backfill").asText() + " complete " + g.get("complete").asBoolean()));
        assertThat(grades).containsExactly("spend/minute since 1 pending complete false", "spend/hour since 1 pending complete false",
                "spend/day since 1 pending complete false", "spend-sku/day since 1 pending complete false",
                "orders/hour since 0 none complete true");
        assertThat(rules.get("grades").get(0).get("countingFrom").asText()).isEqualTo(seam.toString());
        assertThat(rules.get("grades").get(4).get("countingFrom").isNull()).isTrue();
        assertThat(rules.get("retired").get(4).toString())
                .isEqualTo("{\"rule\":\"gone\",\"unit\":\"hour\",\"version\":\"0gone0000000\",\"generation\":1,\"why\":\"removed\"}");
        assertThat(f.get("/metrics").body()).contains("tally_read_rules_generation 1.0");
    }

    @Test
    @Order(3)
    void aRemovedGradeIsUnknown() {
        assertProblem(f.get(point(PK, "gone", TimeUnit.HOUR, s - 1)), 400, "unknown grade 'gone'");
        assertProblem(f.get(rollup("gone", TimeUnit.HOUR, s - 1, s + 2)), 400, "unknown grade 'gone'");
        assertProblem(f.get(range(PK, "grade=gone", TimeUnit.HOUR, s - 1, s + 2)), 400, "unknown grade 'gone'");
        assertProblem(f.get(point(PK, "orders", TimeUnit.DAY, d)), 400, "not kept in unit day");
    }

    @Test
    @Order(4)
    void aPointReadAnswersNoValueOfTheOldVersion() {
        assertProblem(f.get(point(PK, "spend", TimeUnit.HOUR, s - 1)), 404, "No bucket");
        assertProblem(f.get(point(PK, "spend", TimeUnit.DAY, d - 1)), 404, "No bucket");
        assertProblem(f.get(point(PK, "spend-sku:sku-1", TimeUnit.DAY, d - 1)), 404, "No bucket");
        assertProblem(f.get(point(PK, "spend", TimeUnit.MINUTE, (s - 1) * 60 + 5)), 404, "No bucket");
        assertProblem(f.get(point(PK, "spend", TimeUnit.MINUTE, (s + 2) * 60 + 1)), 404, "No bucket");
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.MINUTE, (s + 2) * 60 + 2))).get("count").asLong()).isEqualTo(4);
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.HOUR, s))).get("count").asLong()).isEqualTo(1);
        assertThat(ok(f.get(point(PK, "orders", TimeUnit.HOUR, s - 1))).get("count").asLong())
                .as("an unchanged grade in the same old document").isEqualTo(2);
    }

    @Test
    @Order(5)
    void aRangeSkipsTheBucketsOfTheOldVersion() {
        assertThat(ids(ok(f.get(range(PK, "grade=spend", TimeUnit.HOUR, s - 1, s + 2)))))
                .containsExactly(id("spend", TimeUnit.HOUR, s), id("spend", TimeUnit.HOUR, s + 1));
        assertThat(ids(ok(f.get(range(PK, "grade=spend", TimeUnit.DAY, d - 1, d + 1))))).containsExactly(id("spend", TimeUnit.DAY, d));
        assertThat(ids(ok(f.get(range(PK, "grade=spend-sku&qualifier=sku-1", TimeUnit.DAY, d - 1, d + 1)))))
                .containsExactly(id("spend-sku:sku-1", TimeUnit.DAY, d));
        assertThat(ids(ok(f.get(range(PK, "grade=spend", TimeUnit.MINUTE, (s - 1) * 60, (s + 2) * 60)))))
                .as("the minutes nested in the old hour are left out").containsExactly(id("spend", TimeUnit.MINUTE, s * 60 + 10),
                        id("spend", TimeUnit.MINUTE, s * 60 + 40), id("spend", TimeUnit.MINUTE, (s + 1) * 60 + 5));
        assertThat(ids(ok(f.get(range(PK, "grade=spend", TimeUnit.MINUTE, (s + 2) * 60, (s + 3) * 60)))))
                .as("minute documents go by their own ver").containsExactly(id("spend", TimeUnit.MINUTE, (s + 2) * 60 + 2));
        assertThat(ids(ok(f.get(range(PK, "grade=orders", TimeUnit.HOUR, s - 1, s + 2)))))
                .containsExactly(id("orders", TimeUnit.HOUR, s - 1), id("orders", TimeUnit.HOUR, s));
    }

    @Test
    @Order(6)
    void aRollUpAddsNoValueOfTheOldVersion() {
        JsonNode hours = ok(f.get(rollup("spend", TimeUnit.HOUR, s - 1, s + 2)));
        assertThat(hours.get("bucketsFound").asInt()).isEqualTo(2);
        assertThat(hours.get("sum").decimalValue()).isEqualByComparingTo("50");
        assertThat(hours.get("count").asLong()).isEqualTo(3);
        JsonNode minutes = ok(f.get(rollup("spend", TimeUnit.MINUTE, (s - 1) * 60, (s + 3) * 60)));
        assertThat(minutes.get("bucketsFound").asInt()).isEqualTo(4);
        assertThat(minutes.get("sum").decimalValue()).isEqualByComparingTo("56");
        JsonNode orders = ok(f.get(rollup("orders", TimeUnit.HOUR, s - 1, s + 2)));
        assertThat(orders.get("count").asLong()).isEqualTo(3);
    }

    @Test
    @Order(7)
    void theFeatureVectorLeavesOutTheOldVersionAndRemovedGrades() {
        JsonNode old = ok(f.get("/v1/features/" + enc(PK) + "?at=" + TimeUnit.MINUTE.bucketStart((s - 1) * 60 + 5))).get("grades");
        assertThat(old.has("spend") && (old.get("spend").has("hour") || old.get("spend").has("minute")))
                .as("the old hour's spend, and its nested minute: " + old).isFalse();
        assertThat(old.get("orders").get("hour").get("count").asLong()).isEqualTo(2);
        assertThat(old.has("gone")).as("a removed grade is not a feature").isFalse();
        JsonNode current = ok(f.get("/v1/features/" + enc(PK) + "?at=" + TimeUnit.MINUTE.bucketStart(s * 60 + 10))).get("grades");
        assertThat(current.get("spend").get("hour").get("count").asLong()).isEqualTo(1);
        assertThat(current.has("gone")).isFalse();
        JsonNode legacy = ok(f.get("/v1/features/" + enc(PK) + "?at=" + TimeUnit.MINUTE.bucketStart((s + 2) * 60 + 1))).get("grades");
        assertThat(legacy.path("spend").has("minute")).as("an old minute document: " + legacy).isFalse();
    }

    @Test
    @Order(8)
    void aSpillPageOlderThanItsDocumentHoldsNoValueOfTheNewVersion() {
        assertProblem(f.get(point(HOT, "spend-sku:sku-3", TimeUnit.DAY, d)), 404, "No bucket");
        JsonNode filled = ok(f.get(point(HOT, "spend-sku:sku-3", TimeUnit.DAY, d - 1)));
        assertThat(filled.get("sum").decimalValue()).isEqualByComparingTo("3");
        assertThat(ids(ok(f.get(range(HOT, "grade=spend-sku&qualifier=sku-3", TimeUnit.DAY, d - 1, d + 1)))))
                .containsExactly(id("spend-sku:sku-3", TimeUnit.DAY, d - 1));
    }

    @Test
    @Order(9)
    void aPointReadBeforeTheSeamOfAPendingGradeSaysIncomplete() {
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.HOUR, s))).path("complete").asBoolean(true)).isFalse();
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.HOUR, s + 1))).has("complete")).isFalse();
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.MINUTE, s * 60 + 10))).path("complete").asBoolean(true)).isFalse();
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.MINUTE, s * 60 + 40))).has("complete")).as("past the seam").isFalse();
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.DAY, d))).path("complete").asBoolean(true)).isFalse();
        assertThat(ok(f.get(point(HOT, "spend-sku:sku-3", TimeUnit.DAY, d - 1))).path("complete").asBoolean(true)).isFalse();
        assertThat(ok(f.get(point(PK, "orders", TimeUnit.HOUR, s))).has("complete")).as("counted from the start").isFalse();
    }

    @Test
    @Order(10)
    void aRangeMarksItsBucketsBeforeTheSeamIncomplete() {
        JsonNode hours = ok(f.get(range(PK, "grade=spend", TimeUnit.HOUR, s - 1, s + 2))).get("buckets");
        assertThat(hours.get(0).path("complete").asBoolean(true)).isFalse();
        assertThat(hours.get(1).has("complete")).isFalse();
        JsonNode minutes = ok(f.get(range(PK, "grade=spend", TimeUnit.MINUTE, s * 60, (s + 2) * 60))).get("buckets");
        assertThat(minutes.get(0).path("complete").asBoolean(true)).isFalse();
        assertThat(minutes.get(1).has("complete")).isFalse();
        assertThat(minutes.get(2).has("complete")).isFalse();
        assertThat(ok(f.get(range(PK, "grade=orders", TimeUnit.HOUR, s - 1, s + 2))).toString()).doesNotContain("complete");
    }

    @Test
    @Order(11)
    void aRollUpWhoseWindowStartsBeforeTheSeamIsIncomplete() {
        assertThat(ok(f.get(rollup("spend", TimeUnit.HOUR, s - 1, s + 2))).path("complete").asBoolean(true)).isFalse();
        assertThat(ok(f.get(rollup("spend", TimeUnit.HOUR, s + 1, s + 2))).has("complete")).as("a window after the seam").isFalse();
        assertThat(ok(f.get("/v1/rollups/" + enc(PK) + "?grade=spend&unit=hour&last=2")).has("complete")).isFalse();
        assertThat(ok(f.get(rollup("orders", TimeUnit.HOUR, s - 1, s + 2))).has("complete")).isFalse();
    }

    @Test
    @Order(12)
    void theFeatureVectorMarksTheGradesWhoseCurrentBucketIsIncomplete() {
        JsonNode features = ok(f.get("/v1/features/" + enc(PK) + "?at=" + TimeUnit.MINUTE.bucketStart(s * 60 + 10)));
        JsonNode g = features.get("grades");
        assertThat(g.get("spend").get("hour").path("complete").asBoolean(true)).isFalse();
        assertThat(g.get("spend").get("minute").path("complete").asBoolean(true)).isFalse();
        assertThat(g.get("spend").get("day").path("complete").asBoolean(true)).isFalse();
        assertThat(g.get("spend-sku:sku-1").get("day").path("complete").asBoolean(true)).isFalse();
        assertThat(g.get("orders").get("hour").has("complete")).isFalse();
        assertThat(features.path("incomplete").toString()).isEqualTo("{\"spend\":[\"day\",\"hour\",\"minute\"],\"spend-sku\":[\"day\"]}");

        JsonNode later = ok(f.get("/v1/features/" + enc(PK) + "?at=" + TimeUnit.MINUTE.bucketStart((s + 1) * 60 + 5)));
        assertThat(later.get("grades").get("spend").get("minute").has("complete")).isFalse();
        assertThat(later.get("grades").get("spend").get("hour").has("complete")).isFalse();
        assertThat(later.path("incomplete").path("spend").toString()).as("past the seam, only a day may still hold it")
                .doesNotContain("hour").doesNotContain("minute");
    }

    @Test
    @Order(13)
    void aServiceStartedWithARecordAnswersItFromTheStart() {
        try (ReadMain other = startAnother("--read.rules-refresh.ms=3600000")) {
            JsonNode rules = ok(get(other, "/v1/rules"));
            assertThat(rules.get("source").asText()).isEqualTo("record");
            assertThat(rules.get("generation").asLong()).isEqualTo(1);
            assertThat(get(other, point(PK, "spend", TimeUnit.HOUR, s - 1)).status()).isEqualTo(404);
            assertThat(get(other, "/health/ready").status()).isEqualTo(200);
        }
    }

    @Test
    @Order(14)
    void aServiceThatCannotReadTheRecordAtStartIsNotReadyUntilItCan() {
        String fault = control.injectFault(CosmosControl.Fault.status(503).kind("read").pathPrefix(f.pathPrefix() + "/docs/rules"));
        boolean removed = false;
        try (ReadMain other = startAnother("--read.rules-refresh.ms=200")) {
            var ready = get(other, "/health/ready");
            assertThat(ready.status()).as(ready.body()).isEqualTo(503);
            assertThat(ready.json().get("checks").get("rules").asText()).isEqualTo("rules record not read yet");
            assertThat(ok(get(other, "/v1/rules")).get("source").asText()).as("the file meanwhile").isEqualTo("file");
            control.removeFault(fault);
            removed = true;
            awaitGeneration(() -> get(other, "/v1/rules"), 1);
            assertThat(get(other, "/health/ready").status()).isEqualTo(200);
        } finally {
            if (!removed) control.removeFault(fault);
        }
    }

    // --- the backfill of one grade completes, then generation 2 ---

    @Test
    @Order(15)
    void aGradeWhoseHistoryIsCountedInIsCompleteAgain() {
        RulesStateStore.Stored stored = store.read().orElseThrow();
        store.replace(stored, stored.state().backfilled("spend", TimeUnit.HOUR));
        awaitRules(() -> f.get("/v1/rules"), r -> r.get("grades").get(1).get("complete").asBoolean());
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.HOUR, s))).has("complete")).isFalse();
        assertThat(ok(f.get(range(PK, "grade=spend", TimeUnit.HOUR, s - 1, s + 2))).toString()).doesNotContain("complete");
        assertThat(ok(f.get(rollup("spend", TimeUnit.HOUR, s - 1, s + 2))).has("complete")).isFalse();
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.DAY, d))).path("complete").asBoolean(true)).as("still pending").isFalse();
        JsonNode features = ok(f.get("/v1/features/" + enc(PK) + "?at=" + TimeUnit.MINUTE.bucketStart(s * 60 + 10)));
        assertThat(features.get("grades").get("spend").get("hour").has("complete")).isFalse();
        assertThat(features.path("incomplete").toString()).isEqualTo("{\"spend\":[\"day\",\"minute\"],\"spend-sku\":[\"day\"]}");
    }

    @Test
    @Order(16)
    void aNewGenerationIsPickedUpWithoutRestart() {
        RulesStateStore.Stored stored = store.read().orElseThrow();
        RulesState g1 = stored.state();
        Instant now = TimeUnit.HOUR.bucketStart(s + 3);
        List<Grade> grades = new ArrayList<>(g1.grades().subList(0, 4));
        grades.add(new Grade("orders", TimeUnit.HOUR, "2orders00000", 2, now, Backfill.PENDING));
        List<Retired> retired = new ArrayList<>(g1.retired());
        retired.add(new Retired("orders", TimeUnit.HOUR, "0orders00000", 2, true));
        String rules = g1.rulesText().replace("  - name: orders\n", "  - name: orders\n" + APPROVED);
        store.replace(stored, new RulesState(2, Instant.now(), "v2.yaml", rules, grades, retired));
        awaitGeneration(f, 2);

        assertProblem(f.get(point(PK, "orders", TimeUnit.HOUR, s)), 404, "No bucket");
        JsonNode orders = ok(f.get(rollup("orders", TimeUnit.HOUR, s - 1, s + 2)));
        assertThat(orders.get("bucketsFound").asInt()).isZero();
        assertThat(orders.path("complete").asBoolean(true)).isFalse();
        assertThat(ok(f.get(point(PK, "spend", TimeUnit.HOUR, s + 1))).get("count").asLong()).as("spend keeps generation 1").isEqualTo(2);
        assertThat(f.get("/metrics").body()).contains("tally_read_rules_generation 2.0");
    }

    // --- helpers ---

    static String id(String grade, TimeUnit unit, long index) {
        return grade + "|" + unit.code() + "|" + index;
    }

    static String point(String pk, String grade, TimeUnit unit, long index) {
        return "/v1/buckets/" + enc(pk) + "/" + enc(id(grade, unit, index));
    }

    static String range(String pk, String grade, TimeUnit unit, long first, long end) {
        return "/v1/buckets/" + enc(pk) + "?" + grade + "&unit=" + unit.code() + "&from=" + unit.bucketStart(first) + "&to=" + unit.bucketStart(end);
    }

    static String rollup(String grade, TimeUnit unit, long first, long end) {
        return "/v1/rollups/" + enc(PK) + "?grade=" + grade + "&unit=" + unit.code() + "&from=" + unit.bucketStart(first)
                + "&to=" + unit.bucketStart(end);
    }

    static JsonNode ok(ReadServiceFixture.Answer a) {
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        return a.json();
    }

    static List<String> ids(JsonNode page) {
        List<String> out = new ArrayList<>();
        page.get("buckets").forEach(b -> out.add(b.get("id").asText()));
        return out;
    }

    static JsonNode awaitGeneration(ReadServiceFixture service, long generation) {
        return awaitGeneration(() -> service.get("/v1/rules"), generation);
    }

    static JsonNode awaitGeneration(Supplier<ReadServiceFixture.Answer> rules, long generation) {
        return awaitRules(rules, r -> r.get("generation").asLong(-1) == generation);
    }

    /** Polls /v1/rules until {@code done} holds: the refresh runs every 200 ms here. */
    static JsonNode awaitRules(Supplier<ReadServiceFixture.Answer> rules, java.util.function.Predicate<JsonNode> done) {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = ok(rules.get());
            if (done.test(last)) return last;
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("the rules answered never got there: " + last);
    }

    /** A second read-service on the fixture's container, with the same rules file. */
    static ReadMain startAnother(String... flags) {
        List<String> all = new ArrayList<>(List.of("--cosmos.endpoint=" + f.cosmos.endpoint(), "--cosmos.database=" + f.database,
                "--read.http.port=0", "--read.cosmos.warmup-requests=0", "--read.rules-file=" + rulesFile));
        all.addAll(List.of(flags));
        return new ReadMain(ReadSettings.load(all.toArray(String[]::new), Map.of())).start();
    }

    static ReadServiceFixture.Answer get(ReadMain service, String pathAndQuery) {
        try {
            HttpResponse<String> r = f.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.port() + pathAndQuery))
                    .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
            return new ReadServiceFixture.Answer(r.statusCode(), r.headers().map(), r.body());
        } catch (Exception e) {
            throw new AssertionError("GET " + pathAndQuery + " failed", e);
        }
    }
}
