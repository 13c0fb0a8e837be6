package io.tally.tests.read;

import static io.tally.tests.read.ReadServiceFixture.bucket;
import static io.tally.tests.read.ReadServiceFixture.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every route of read-service against documents written directly into the local Cosmos endpoint,
 * and every validation error: 400 with an RFC 9457 body that names the problem and leaks nothing.
 * API keys are off here (ReadAuthIT covers them).
 */
@ExtendWith(LocalStackExtension.class)
class ReadApiIT {
    static final String DOMAIN = "it";
    static final String CUSTOMER = "cust-1";
    static final String PK = DOMAIN + "|" + CUSTOMER;
    static final int HOURS = 100;

    static ReadServiceFixture f;
    static long hourNow;
    static final List<BucketDocument> hours = new ArrayList<>();

    @BeforeAll
    static void start(LocalCosmos cosmos) {
        f = new ReadServiceFixture(cosmos, Map.of(), "--read.max-range-buckets=500");
        hourNow = TimeUnit.HOUR.bucketIndex(Instant.now());
        List<BucketDocument> docs = new ArrayList<>();
        // spend-per-customer, hour: from 98 hours ago to 1 hour ahead (a clock crossing an hour mid-test stays covered)
        for (long h = hourNow - HOURS + 2; h <= hourNow + 1; h++) {
            long i = h - (hourNow - HOURS + 2);
            BucketDocument d = bucket(DOMAIN, CUSTOMER, "spend-per-customer", TimeUnit.HOUR, h,
                    (i + 1) + ".25", 2, "0." + (10 + i % 50), (i + 1) + ".00");
            hours.add(d);
            docs.add(d);
        }
        long dayNow = TimeUnit.DAY.bucketIndex(Instant.now());
        for (long d = dayNow - 9; d <= dayNow + 1; d++) {
            docs.add(bucket(DOMAIN, CUSTOMER, "spend-per-customer", TimeUnit.DAY, d, "100.50", 10, "1.00", "20.00"));
            docs.add(bucket(DOMAIN, CUSTOMER, "spend-per-customer-sku:sku-3", TimeUnit.DAY, d, "7.10", 1, null, null));
            docs.add(bucket(DOMAIN, CUSTOMER, "spend-per-customer-sku:sku-9", TimeUnit.DAY, d, "3.00", 3, null, null));
        }
        docs.add(bucket(DOMAIN, "cust-2", "spend-per-customer", TimeUnit.HOUR, hourNow, "999", 1, "999", "999")); // other partition
        f.write(docs);
    }

    @AfterAll
    static void stop() {
        if (f != null) f.close();
    }

    // --- point read ---

    @Test
    void pointReadReturnsTheDocument() {
        BucketDocument d = hours.get(10);
        var a = f.get("/v1/buckets/" + enc(PK) + "/" + enc(d.id()));
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.header("Content-Type")).isEqualTo("application/json");
        JsonNode j = a.json();
        assertThat(j.get("id").asText()).isEqualTo(d.id());
        assertThat(j.get("sum").decimalValue()).isEqualByComparingTo(d.sum());
        assertThat(j.get("count").asLong()).isEqualTo(2);
        assertThat(j.has("_rid")).as("Cosmos system properties are not served").isFalse();
    }

    @Test
    void pointReadOfAMissingBucketIs404Problem() {
        var a = f.get("/v1/buckets/" + enc(PK) + "/" + enc("spend-per-customer|hour|1"));
        assertThat(a.status()).isEqualTo(404);
        assertThat(a.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(a.json().get("status").asInt()).isEqualTo(404);
        assertThat(a.json().get("title").asText()).isEqualTo("Not found");
    }

    // --- range ---

    @Test
    void rangeReturnsTheBucketsOfOneGradeInOrder() {
        long first = hourNow - 71;
        var a = f.get("/v1/buckets/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(first)
                + "&to=" + TimeUnit.HOUR.bucketStart(hourNow + 1));
        assertThat(a.status()).isEqualTo(200);
        JsonNode j = a.json();
        assertThat(j.get("buckets")).hasSize(72);
        List<String> starts = new ArrayList<>();
        j.get("buckets").forEach(b -> starts.add(b.get("bucket").asText()));
        assertThat(starts).isSortedAccordingTo(String::compareTo);
        assertThat(starts.get(0)).isEqualTo(TimeUnit.HOUR.bucketStart(first).toString());
        assertThat(starts.get(71)).isEqualTo(TimeUnit.HOUR.bucketStart(hourNow).toString());
        j.get("buckets").forEach(b -> assertThat(b.get("unit").asText()).isEqualTo("hour"));
        assertThat(j.has("continuation")).isFalse();
    }

    @Test
    void rangeFromInsideABucketStartsWithThatBucketAndToIsExclusive() {
        var a = f.get("/v1/buckets/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from="
                + TimeUnit.HOUR.bucketStart(hourNow - 5).plusSeconds(1800) + "&to=" + TimeUnit.HOUR.bucketStart(hourNow - 2));
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.json().get("buckets")).hasSize(3); // hours -5, -4, -3
    }

    @Test
    void rangePagesWithContinuationTokens() {
        String q = "/v1/buckets/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(hourNow - 24)
                + "&to=" + TimeUnit.HOUR.bucketStart(hourNow);
        List<String> seen = new ArrayList<>();
        String token = null;
        int pages = 0;
        do {
            var a = f.get(q + "&limit=10" + (token == null ? "" : "&continuation=" + enc(token)));
            assertThat(a.status()).as(a.body()).isEqualTo(200);
            a.json().get("buckets").forEach(b -> seen.add(b.get("bucket").asText()));
            token = a.json().has("continuation") ? a.json().get("continuation").asText() : null;
            pages++;
        } while (token != null && pages < 10);
        assertThat(seen).hasSize(24).doesNotHaveDuplicates().isSortedAccordingTo(String::compareTo);
        assertThat(pages).isEqualTo(3);
    }

    @Test
    void aContinuationTokenOfAnotherQueryIs400() {
        String q = "/v1/buckets/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(hourNow - 24)
                + "&to=" + TimeUnit.HOUR.bucketStart(hourNow);
        String token = f.get(q + "&limit=5").json().get("continuation").asText();
        var a = f.get("/v1/buckets/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(hourNow - 30)
                + "&to=" + TimeUnit.HOUR.bucketStart(hourNow) + "&continuation=" + enc(token));
        assertProblem(a, 400, "different query");
    }

    @Test
    void rangeOfAQualifierGradeReadsOneSku() {
        long dayNow = TimeUnit.DAY.bucketIndex(Instant.now());
        var a = f.get("/v1/buckets/" + enc(PK) + "?grade=spend-per-customer-sku&qualifier=sku-3&unit=day&from="
                + TimeUnit.DAY.bucketStart(dayNow - 6) + "&to=" + TimeUnit.DAY.bucketStart(dayNow + 1));
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.json().get("grade").asText()).isEqualTo("spend-per-customer-sku:sku-3");
        assertThat(a.json().get("buckets")).hasSize(7);
        a.json().get("buckets").forEach(b -> assertThat(b.get("grade").asText()).isEqualTo("spend-per-customer-sku:sku-3"));
    }

    // --- roll-up ---

    @Test
    void rollupOverTheLast72HoursSumsDecimalsExactly() {
        var a = f.get("/v1/rollups/" + enc(PK) + "?grade=spend-per-customer&unit=hour&last=72");
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        JsonNode j = a.json();
        assertThat(j.get("units").asLong()).isEqualTo(72);
        // Expected from the documents in the answer's own window, so an hour ticking over mid-test cannot break it.
        Instant from = Instant.parse(j.get("from").asText());
        Instant to = Instant.parse(j.get("to").asText());
        assertThat(TimeUnit.HOUR.bucketIndex(to) - TimeUnit.HOUR.bucketIndex(from)).isEqualTo(72);
        List<BucketDocument> in = hours.stream().filter(d -> !Instant.parse(d.bucket()).isBefore(from) && Instant.parse(d.bucket()).isBefore(to)).toList();
        assertThat(in).hasSize(72);
        assertThat(j.get("bucketsFound").asInt()).isEqualTo(72);
        assertThat(j.get("sum").decimalValue()).isEqualByComparingTo(in.stream().map(BucketDocument::sum).reduce(BigDecimal.ZERO, BigDecimal::add));
        assertThat(j.get("count").asLong()).isEqualTo(144);
        assertThat(j.get("min").decimalValue()).isEqualByComparingTo(in.stream().map(BucketDocument::min).min(BigDecimal::compareTo).orElseThrow());
        assertThat(j.get("max").decimalValue()).isEqualByComparingTo(in.stream().map(BucketDocument::max).max(BigDecimal::compareTo).orElseThrow());
    }

    @Test
    void rollupOverATimeRange() {
        var a = f.get("/v1/rollups/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(hourNow - 10)
                + "&to=" + TimeUnit.HOUR.bucketStart(hourNow - 7));
        assertThat(a.status()).isEqualTo(200);
        BigDecimal expected = hours.stream().filter(d -> d.id().endsWith("|" + (hourNow - 10)) || d.id().endsWith("|" + (hourNow - 9))
                || d.id().endsWith("|" + (hourNow - 8))).map(BucketDocument::sum).reduce(BigDecimal.ZERO, BigDecimal::add);
        assertThat(a.json().get("sum").decimalValue()).isEqualByComparingTo(expected);
        assertThat(a.json().get("count").asLong()).isEqualTo(6);
    }

    @Test
    void rollupPerSkuViaTheQualifierGrade() {
        var a = f.get("/v1/rollups/" + enc(PK) + "?grade=" + enc("spend-per-customer-sku:sku-9") + "&unit=day&last=7");
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.json().get("sum").decimalValue()).isEqualByComparingTo("21.00");
        assertThat(a.json().get("count").asLong()).isEqualTo(21);
        assertThat(a.json().get("min").isNull()).as("the rule keeps no min").isTrue();
    }

    @Test
    void rollupOfAnEntityWithoutBucketsIsZero() {
        var a = f.get("/v1/rollups/" + enc(DOMAIN + "|nobody") + "?grade=spend-per-customer&unit=hour&last=72");
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.json().get("sum").decimalValue()).isEqualByComparingTo("0");
        assertThat(a.json().get("count").asLong()).isZero();
        assertThat(a.json().get("bucketsFound").asInt()).isZero();
    }

    // --- feature vector ---

    @Test
    void featuresReturnTheCurrentBucketOfEveryGrade() {
        Instant at = TimeUnit.HOUR.bucketStart(hourNow).plusSeconds(60);
        var a = f.get("/v1/features/" + enc(PK) + "?at=" + at);
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        JsonNode g = a.json().get("grades");
        assertThat(g.get("spend-per-customer").get("hour").get("bucket").asText()).isEqualTo(TimeUnit.HOUR.bucketStart(hourNow).toString());
        assertThat(g.get("spend-per-customer").get("day").get("sum").decimalValue()).isEqualByComparingTo("100.50");
        assertThat(g.get("spend-per-customer-sku:sku-3").get("day").get("sum").decimalValue()).isEqualByComparingTo("7.10");
        assertThat(g.get("spend-per-customer-sku:sku-9").get("day").get("count").asLong()).isEqualTo(3);
        assertThat(a.json().get("truncated").asBoolean()).isFalse();
    }

    @Test
    void featuresOfAnUnknownEntityAreEmpty() {
        var a = f.get("/v1/features/" + enc(DOMAIN + "|nobody"));
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.json().get("grades").size()).isZero();
    }

    // --- validation ---

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "unknown grade;          /v1/buckets/it%7Ccust-1?grade=nope&unit=hour&from=2026-01-01T00:00:00Z;        unknown grade",
        "unknown unit;           /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=week&from=2026-01-01T00:00:00Z; unknown unit",
        "unit not kept;          /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=minute&from=2026-01-01T00:00:00Z; not kept in unit",
        "from after to;          /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=hour&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z; from must be before to",
        "range too wide;         /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=hour&from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z; at most 500",
        "malformed from;         /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=hour&from=yesterday;    ISO-8601",
        "missing from;           /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=hour;                   from is required",
        "bad limit;              /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=hour&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&limit=0; limit must be",
        "bad continuation;       /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=hour&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&continuation=%25%25notatoken; continuation is not a token",
        "unknown parameter;      /v1/buckets/it%7Ccust-1?grade=spend-per-customer&unit=hour&form=2026-01-01T00:00:00Z; unknown parameter",
        "pk without domain;      /v1/buckets/cust-1?grade=spend-per-customer&unit=hour&from=2026-01-01T00:00:00Z; pk must look like",
        "malformed id;           /v1/buckets/it%7Ccust-1/spend-per-customer;                                   id must look like",
        "id with bad index;      /v1/buckets/it%7Ccust-1/spend-per-customer%7Chour%7Cabc;                      whole bucket index",
        "id with bad unit;       /v1/buckets/it%7Ccust-1/spend-per-customer%7Cweek%7C1;                        unknown unit",
        "control character;      /v1/buckets/it%7Ccust%01/spend-per-customer%7Chour%7C1;                       control characters",
        "qualifier missing;      /v1/rollups/it%7Ccust-1?grade=spend-per-customer-sku&unit=day&last=7;         kept per qualifier",
        "qualifier not allowed;  /v1/rollups/it%7Ccust-1?grade=spend-per-customer&qualifier=x&unit=hour&last=7; has no qualifier",
        "last and from;          /v1/rollups/it%7Ccust-1?grade=spend-per-customer&unit=hour&last=7&from=2026-01-01T00:00:00Z; either last or from",
        "last too large;         /v1/rollups/it%7Ccust-1?grade=spend-per-customer&unit=hour&last=501;          last must be",
        "neither last nor from;  /v1/rollups/it%7Ccust-1?grade=spend-per-customer&unit=hour;                   give last",
        "bad at;                 /v1/features/it%7Ccust-1?at=now;                                              ISO-8601",
    })
    void invalidInputIs400Problem(String name, String path, String detail) {
        assertProblem(f.get(path), 400, detail);
    }

    @Test
    void oversizedKeysAre400() {
        String longEntity = "x".repeat(1800);
        assertProblem(f.get("/v1/buckets/" + enc(DOMAIN + "|" + longEntity) + "/" + enc("spend-per-customer|hour|1")), 400, "longer than 1801");
        assertProblem(f.get("/v1/rollups/" + enc(PK) + "?grade=spend-per-customer-sku&qualifier=" + "q".repeat(1802) + "&unit=day&last=1"),
                400, "longer than 1801");
    }

    @Test
    void unknownRoutesAre404Problems() {
        assertProblem(f.get("/v2/nothing"), 404, "No such route");
    }

    // --- operations ---

    @Test
    void healthMetricsAndOpenApiAreServed() {
        assertThat(f.get("/health/live").status()).isEqualTo(200);
        var ready = f.get("/health/ready");
        assertThat(ready.status()).isEqualTo(200);
        assertThat(ready.json().get("checks").get("cosmos").asText()).isEqualTo("UP");

        f.get("/v1/buckets/" + enc(PK) + "/" + enc(hours.get(0).id()));
        var metrics = f.get("/metrics");
        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.body()).contains("tally_read_requests_seconds_bucket{endpoint=\"point-read\"")
                .contains("status=\"200\"").contains("tally_read_cosmos_seconds_count{operation=\"read\"");

        var openapi = f.get("/openapi.json");
        assertThat(openapi.status()).isEqualTo(200);
        JsonNode paths = openapi.json().get("paths");
        assertThat(paths.has("/v1/buckets/{pk}/{id}")).isTrue();
        assertThat(paths.has("/v1/buckets/{pk}")).isTrue();
        assertThat(paths.has("/v1/rollups/{pk}")).isTrue();
        assertThat(paths.has("/v1/features/{pk}")).isTrue();
        assertThat(paths.has("/v1/rules")).isTrue();
        assertThat(f.get("/openapi.yaml").body()).startsWith("openapi: 3.1.0");
    }

    static void assertProblem(ReadServiceFixture.Answer a, int status, String detailContains) {
        assertThat(a.status()).as(a.body()).isEqualTo(status);
        assertThat(a.header("Content-Type")).isEqualTo("application/problem+json");
        JsonNode j = a.json();
        assertThat(j.get("status").asInt()).isEqualTo(status);
        assertThat(j.get("type").asText()).startsWith("https://");
        assertThat(j.get("title").asText()).isNotBlank();
        assertThat(j.get("detail").asText()).contains(detailContains.trim());
        assertThat(a.body()).doesNotContain("Exception").doesNotContain("at io.").doesNotContain("activityId");
    }
}
