package io.tally.tests.read;

import static io.tally.tests.read.ReadServiceFixture.bucket;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Qualifier values and entity keys are event data and may hold any character: every one of them is answered by point
 * read, range, roll-up and feature vector, with requests percent-encoded as RFC 3986 says (URIs built from encoded
 * parts, plus raw request lines for what a client library would normalise). Every value sits next to the values a
 * wrong decoding would turn it into ({@code a+b} and {@code a b}, {@code %2F} and {@code /}, {@code sku-x/y~1.z} and
 * {@code sku-x}), each with a sum of its own, so an answer for the wrong key cannot pass. Also: every decimal in every
 * answer is in plain notation.
 */
@ExtendWith(LocalStackExtension.class)
class ReadKeyCharactersIT {
    static final String QUALIFIED = "spend-per-customer-sku";
    static final String PLAIN = "spend-per-customer";
    /** The entity holding every qualifier value. */
    static final String SHARED_PK = "ch|shared";
    /** The entity whose qualified rule spilled (more than 64 values in one bucket): its values live in spill pages. */
    static final String SPILLED_PK = "ch|spilled";
    static final Pattern EXPONENT = Pattern.compile("\\d[eE][+-]?\\d");

    static ReadServiceFixture f;
    static long dayNow;

    /**
     * One value per character class, the values a wrong decoding of another one would produce, and the longest value
     * ingest-app stores (900 UTF-8 bytes).
     */
    static List<String> values() {
        return List.of("sku-x/y~1.z", "sku-x", "/", "%2F", "back\\slash", "why?", "hash#tag", "bar|bar", "colon:colon", "100%",
                "a+b", "a b", "\"double\" 'single'", "semi;colon&amp=eq", "é日本", "😀🇩🇪", "𝄞", "€".repeat(300));
    }

    /** A sum no other value has: 10.25, 20.25, ... (today's bucket; yesterday's holds one more). */
    static BigDecimal sum(String value) {
        return BigDecimal.valueOf(values().indexOf(value) + 1).multiply(BigDecimal.TEN).add(new BigDecimal("0.25"));
    }

    @BeforeAll
    static void start(LocalCosmos cosmos) {
        f = new ReadServiceFixture(cosmos, Map.of());
        dayNow = TimeUnit.DAY.bucketIndex(Instant.now());
        List<BucketDocument> docs = new ArrayList<>();
        for (String v : values()) {
            String s = sum(v).toPlainString();
            String grade = QUALIFIED + ":" + v;
            docs.add(bucket("ch", "shared", grade, TimeUnit.DAY, dayNow, s, 1, null, null));
            docs.add(bucket("ch", "shared", grade, TimeUnit.DAY, dayNow - 1, "1", 1, null, null));
            docs.add(bucket("ch", "spilled", grade, TimeUnit.DAY, dayNow, s, 1, null, null));
            // The same character in the entity key: one entity per value, each with sums of its own.
            docs.add(bucket("ch", v, PLAIN, TimeUnit.DAY, dayNow, s, 2, "1.00", s));
            docs.add(bucket("ch", v, grade, TimeUnit.DAY, dayNow, s, 1, null, null));
        }
        for (int i = 0; i < 60; i++) docs.add(bucket("ch", "spilled", QUALIFIED + ":filler-" + i, TimeUnit.DAY, dayNow, "1", 1, null, null));
        // Values whose shortest BigDecimal form is an exponent once the store has turned them into doubles.
        docs.add(bucket("ch", "decimals", PLAIN, TimeUnit.DAY, dayNow, "50.00", 3, "0.0000001", "1E+21"));
        docs.add(bucket("ch", "decimals", PLAIN, TimeUnit.DAY, dayNow - 1, "120", 1, "0.5", "700"));
        f.write(docs);
    }

    @AfterAll
    static void stop() {
        if (f != null) f.close();
    }

    @Test
    void theSpilledEntitysRuleReallySpilled() {
        var a = get("/v1/features/" + enc(SPILLED_PK));
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(a.json().path("spilled").path(QUALIFIED).toString()).contains("day");
    }

    @ParameterizedTest
    @MethodSource("values")
    void aQualifierValueIsAnsweredByPointReadRangeRollupAndFeatures(String value) {
        String grade = QUALIFIED + ":" + value;
        for (String pk : List.of(SHARED_PK, SPILLED_PK)) {
            var point = get("/v1/buckets/" + enc(pk) + "/" + enc(grade + "|day|" + dayNow));
            assertThat(point.status()).as("%s: %s", pk, point.body()).isEqualTo(200);
            assertThat(point.json().get("grade").asText()).isEqualTo(grade);
            assertThat(point.json().get("id").asText()).isEqualTo(grade + "|day|" + dayNow);
            assertThat(point.json().get("sum").decimalValue()).isEqualByComparingTo(sum(value));

            var range = get("/v1/buckets/" + enc(pk) + "?grade=" + QUALIFIED + "&qualifier=" + enc(value) + "&unit=day&from="
                    + TimeUnit.DAY.bucketStart(dayNow - 1) + "&to=" + TimeUnit.DAY.bucketStart(dayNow + 1));
            assertThat(range.status()).as("%s: %s", pk, range.body()).isEqualTo(200);
            assertThat(range.json().get("grade").asText()).isEqualTo(grade);
            List<BigDecimal> sums = new ArrayList<>();
            range.json().get("buckets").forEach(b -> sums.add(b.get("sum").decimalValue()));
            assertThat(sums).usingElementComparator(BigDecimal::compareTo)
                    .containsExactlyElementsOf(pk.equals(SHARED_PK) ? List.of(BigDecimal.ONE, sum(value)) : List.of(sum(value)));

            var rollup = get("/v1/rollups/" + enc(pk) + "?grade=" + enc(grade) + "&unit=day&last=7");
            assertThat(rollup.status()).as("%s: %s", pk, rollup.body()).isEqualTo(200);
            assertThat(rollup.json().get("sum").decimalValue())
                    .isEqualByComparingTo(pk.equals(SHARED_PK) ? sum(value).add(BigDecimal.ONE) : sum(value));
        }
        var features = get("/v1/features/" + enc(SHARED_PK));
        assertThat(features.status()).as(features.body()).isEqualTo(200);
        assertThat(features.json().get("grades").get(grade).get("day").get("sum").decimalValue()).isEqualByComparingTo(sum(value));
    }

    @ParameterizedTest
    @MethodSource("values")
    void anEntityKeyIsAnsweredByPointReadRangeRollupAndFeatures(String value) {
        String pk = "ch|" + value;
        var point = get("/v1/buckets/" + enc(pk) + "/" + enc(PLAIN + "|day|" + dayNow));
        assertThat(point.status()).as(point.body()).isEqualTo(200);
        assertThat(point.json().get("pk").asText()).isEqualTo(pk);
        assertThat(point.json().get("sum").decimalValue()).isEqualByComparingTo(sum(value));

        var range = get("/v1/buckets/" + enc(pk) + "?grade=" + PLAIN + "&unit=day&from=" + TimeUnit.DAY.bucketStart(dayNow));
        assertThat(range.status()).as(range.body()).isEqualTo(200);
        assertThat(range.json().get("pk").asText()).isEqualTo(pk);
        assertThat(range.json().get("buckets")).hasSize(1);
        assertThat(range.json().get("buckets").get(0).get("sum").decimalValue()).isEqualByComparingTo(sum(value));

        var rollup = get("/v1/rollups/" + enc(pk) + "?grade=" + QUALIFIED + "&qualifier=" + enc(value) + "&unit=day&last=3");
        assertThat(rollup.status()).as(rollup.body()).isEqualTo(200);
        assertThat(rollup.json().get("sum").decimalValue()).isEqualByComparingTo(sum(value));

        var features = get("/v1/features/" + enc(pk));
        assertThat(features.status()).as(features.body()).isEqualTo(200);
        assertThat(features.json().get("pk").asText()).isEqualTo(pk);
        assertThat(features.json().get("grades").get(PLAIN).get("day").get("max").decimalValue()).isEqualByComparingTo(sum(value));
        assertThat(features.json().get("grades").get(QUALIFIED + ":" + value).get("day").get("count").asLong()).isEqualTo(1);
    }

    /** Request lines as they reach the server, bytes exactly as written here. */
    @Test
    void rawRequestLinesAreDecodedAfterRouting() throws Exception {
        RawHttp raw = new RawHttp(f.read.port(), Duration.ofSeconds(20));
        // %2F inside a segment: still one segment, the point read route, and the value with the slash.
        var slash = raw.send(line("/v1/buckets/ch%7Cshared/spend-per-customer-sku%3Asku-x%2Fy~1.z%7Cday%7C" + dayNow));
        assertThat(slash.status()).as(slash.text()).isEqualTo(200);
        assertThat(json(slash).get("sum").decimalValue()).isEqualByComparingTo(sum("sku-x/y~1.z"));
        // A path keeps + as a plus; in the query string + is a space and %2B a plus (HTML form encoding).
        var plusInPath = raw.send(line("/v1/buckets/ch%7Cshared/spend-per-customer-sku:a+b%7Cday%7C" + dayNow));
        assertThat(json(plusInPath).get("sum").decimalValue()).isEqualByComparingTo(sum("a+b"));
        var plusInQuery = raw.send(line("/v1/rollups/ch%7Cshared?grade=spend-per-customer-sku&qualifier=a+b&unit=day&last=1"));
        assertThat(json(plusInQuery).get("grade").asText()).isEqualTo(QUALIFIED + ":a b");
        assertThat(json(plusInQuery).get("sum").decimalValue()).isEqualByComparingTo(sum("a b"));
        var encodedPlus = raw.send(line("/v1/rollups/ch%7Cshared?grade=spend-per-customer-sku&qualifier=a%2Bb&unit=day&last=1"));
        assertThat(json(encodedPlus).get("sum").decimalValue()).isEqualByComparingTo(sum("a+b"));
        // ; is data in a query value, only & separates parameters.
        var semicolon = raw.send(line("/v1/rollups/ch%7Cshared?grade=spend-per-customer-sku&qualifier=semi;colon%26amp%3Deq&unit=day&last=1"));
        assertThat(json(semicolon).get("sum").decimalValue()).isEqualByComparingTo(sum("semi;colon&amp=eq"));
        // Raw UTF-8 in the target (not percent-encoded) is read as UTF-8, in a path segment and in the query.
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        target.writeBytes("/v1/rollups/ch%7C".getBytes(StandardCharsets.US_ASCII));
        target.writeBytes("😀🇩🇪".getBytes(StandardCharsets.UTF_8));
        target.writeBytes("?grade=spend-per-customer-sku&unit=day&last=1&qualifier=".getBytes(StandardCharsets.US_ASCII));
        target.writeBytes("😀🇩🇪".getBytes(StandardCharsets.UTF_8));
        var utf8 = raw.send(new RawHttp.Request("GET", target.toByteArray(), Map.of(), null));
        assertThat(utf8.status()).as(utf8.text()).isEqualTo(200);
        assertThat(json(utf8).get("pk").asText()).isEqualTo("ch|😀🇩🇪");
        assertThat(json(utf8).get("sum").decimalValue()).isEqualByComparingTo(sum("😀🇩🇪"));
        // Bytes that are not UTF-8 name no stored key: 400, not a lossy guess.
        var notUtf8 = raw.send(line("/v1/features/ch%7C%C3%28"));
        assertThat(notUtf8.status()).as(notUtf8.text()).isEqualTo(400);
        assertThat(notUtf8.text()).contains("percent-encoded UTF-8");
    }

    @Test
    void everyAnswerWritesDecimalsInPlainNotation() {
        String pk = enc("ch|decimals");
        var point = get("/v1/buckets/" + pk + "/" + enc(PLAIN + "|day|" + dayNow));
        var range = get("/v1/buckets/" + pk + "?grade=" + PLAIN + "&unit=day&from=" + TimeUnit.DAY.bucketStart(dayNow - 1));
        var rollup = get("/v1/rollups/" + pk + "?grade=" + PLAIN + "&unit=day&last=2");
        var features = get("/v1/features/" + pk);
        for (ReadServiceFixture.Answer a : List.of(point, range, rollup, features)) {
            assertThat(a.status()).as(a.body()).isEqualTo(200);
            assertThat(EXPONENT.matcher(a.body()).find()).as("exponent notation in %s", a.body()).isFalse();
        }
        assertThat(point.body()).contains("\"min\":0.0000001", "\"max\":1000000000000000000000");
        assertThat(point.json().get("sum").decimalValue()).isEqualByComparingTo("50");
        assertThat(range.body()).contains("\"min\":0.0000001", "\"max\":1000000000000000000000");
        assertThat(rollup.body()).contains("\"min\":0.0000001", "\"max\":1000000000000000000000");
        assertThat(rollup.json().get("sum").decimalValue()).isEqualByComparingTo("170");
        assertThat(features.body()).contains("\"min\":0.0000001", "\"max\":1000000000000000000000");
    }

    // --- requests ---

    /** RFC 3986: every byte outside the unreserved set percent-encoded (URLEncoder differs only in a space as +). */
    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** GET through java.net.http with a URI built from already encoded parts (the client sends them as they are). */
    static ReadServiceFixture.Answer get(String encodedPathAndQuery) {
        try {
            URI uri = URI.create("http://127.0.0.1:" + f.read.port() + encodedPathAndQuery);
            assertThat(uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())).isEqualTo(encodedPathAndQuery);
            HttpResponse<String> r = f.http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new ReadServiceFixture.Answer(r.statusCode(), r.headers().map(), r.body());
        } catch (Exception e) {
            throw new AssertionError("GET " + encodedPathAndQuery + " failed", e);
        }
    }

    static RawHttp.Request line(String target) {
        return new RawHttp.Request("GET", target.getBytes(StandardCharsets.US_ASCII), Map.of(), null);
    }

    static JsonNode json(RawHttp.Response r) throws Exception {
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        return ReadServiceFixture.JSON.readTree(r.body());
    }
}
