package io.tally.tests.read;

import static io.tally.tests.read.ReadServiceFixture.bucket;
import static io.tally.tests.read.ReadServiceFixture.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Sums past a double's precision, stored in the local Cosmos endpoint (which keeps a JSON number as a double, as the
 * service documents it does) and served by read-service: every figure exact, in plain notation.
 */
@ExtendWith(LocalStackExtension.class)
class ExactDecimalsIT {
    /** Reads every JSON number with a fraction as the decimal written, so an answer is checked digit for digit. */
    static final ObjectMapper EXACT = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
    static final String PK = "exact|merchant-1";
    /** 18 significant digits: one hour of a busy merchant in a currency without minor units at its scale. */
    static final String HOUR_SUM = "12345678901234.5678";
    /** 18 significant digits too; with HOUR_SUM, a roll-up of 19. */
    static final String NEXT_HOUR_SUM = "98765432109876.5432";
    static final String ROLLUP_SUM = "111111111011111.1110";
    static final String MAX = "999999999.9999";

    static ReadServiceFixture f;
    static long hour;

    @BeforeAll
    static void start(LocalCosmos cosmos) {
        f = new ReadServiceFixture(cosmos, Map.of());
        hour = TimeUnit.HOUR.bucketIndex(Instant.now()) - 1;
        f.write(List.of(
                bucket("exact", "merchant-1", "spend-per-customer", TimeUnit.HOUR, hour, HOUR_SUM, 12_346, "0.0001", MAX),
                bucket("exact", "merchant-1", "spend-per-customer", TimeUnit.HOUR, hour + 1, NEXT_HOUR_SUM, 98_766, "5E+1", MAX),
                bucket("exact", "merchant-1", "spend-per-customer-sku:sku-x/y~1.z", TimeUnit.HOUR, hour, HOUR_SUM, 1, null, null)));
    }

    @AfterAll
    static void stop() {
        if (f != null) f.close();
    }

    @Test
    void theEndpointKeepsAJsonNumberAsADoubleAsTheServiceDoes() {
        // "Number: A double-precision floating-point number, IEEE 754 standard" (Azure Cosmos DB for NoSQL, Constants):
        // a decimal written as a number comes back rounded; the same digits in a string come back as written.
        ObjectNode doc = EXACT.createObjectNode().put("id", "numbers").put("pk", PK)
                .put("asNumber", new BigDecimal(HOUR_SUM)).put("asString", HOUR_SUM);
        f.container.upsertItem(doc, new PartitionKey(PK), null).block(Duration.ofSeconds(30));
        JsonNode back = f.container.readItem("numbers", new PartitionKey(PK), JsonNode.class).block(Duration.ofSeconds(30)).getItem();
        assertThat(back.get("asNumber").decimalValue()).isNotEqualByComparingTo(HOUR_SUM)
                .isEqualByComparingTo(new BigDecimal(Double.toString(Double.parseDouble(HOUR_SUM))));
        assertThat(back.get("asString").asText()).isEqualTo(HOUR_SUM);
    }

    @Test
    void aPointReadAnswersEveryDigitInPlainNotation() throws Exception {
        String id = "spend-per-customer|hour|" + hour;
        var a = f.get("/v1/buckets/" + enc(PK) + "/" + enc(id));
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        JsonNode j = EXACT.readTree(a.body());
        assertThat(j.get("sum").decimalValue()).isEqualTo(new BigDecimal(HOUR_SUM));
        assertThat(j.get("max").decimalValue()).isEqualTo(new BigDecimal(MAX));
        assertThat(a.body()).contains(HOUR_SUM).doesNotContainPattern("[0-9][eE][+-]?[0-9]");

        var next = f.get("/v1/buckets/" + enc(PK) + "/" + enc("spend-per-customer|hour|" + (hour + 1)));
        assertThat(next.body()).as("5E+1 written plainly").contains("\"min\":50").doesNotContainPattern("[0-9][eE][+-]?[0-9]");
    }

    @Test
    void aRangeAndARollUpAnswerEveryDigit() throws Exception {
        var range = f.get("/v1/buckets/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(hour)
                + "&to=" + TimeUnit.HOUR.bucketStart(hour + 2));
        assertThat(range.status()).as(range.body()).isEqualTo(200);
        JsonNode items = EXACT.readTree(range.body()).get("buckets");
        assertThat(items).hasSize(2);
        assertThat(items.get(0).get("sum").decimalValue()).isEqualTo(new BigDecimal(HOUR_SUM));
        assertThat(items.get(1).get("sum").decimalValue()).isEqualTo(new BigDecimal(NEXT_HOUR_SUM));

        var rollup = f.get("/v1/rollups/" + enc(PK) + "?grade=spend-per-customer&unit=hour&from=" + TimeUnit.HOUR.bucketStart(hour)
                + "&to=" + TimeUnit.HOUR.bucketStart(hour + 2));
        assertThat(rollup.status()).as(rollup.body()).isEqualTo(200);
        JsonNode r = EXACT.readTree(rollup.body());
        assertThat(r.get("sum").decimalValue()).isEqualByComparingTo(ROLLUP_SUM);
        assertThat(rollup.body()).as("18 significant digits past a double's").contains("111111111011111.111");
        assertThat(r.get("count").asLong()).isEqualTo(12_346 + 98_766);
        assertThat(r.get("min").decimalValue()).isEqualTo(new BigDecimal("0.0001"));
        assertThat(rollup.body()).doesNotContainPattern("[0-9][eE][+-]?[0-9]");
    }

    @Test
    void theFeatureVectorAnswersEveryDigit() throws Exception {
        var a = f.get("/v1/features/" + enc(PK) + "?at=" + TimeUnit.HOUR.bucketStart(hour).plusSeconds(60));
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        JsonNode g = EXACT.readTree(a.body()).get("grades");
        assertThat(g.get("spend-per-customer").get("hour").get("sum").decimalValue()).isEqualTo(new BigDecimal(HOUR_SUM));
        assertThat(g.get("spend-per-customer-sku:sku-x/y~1.z").get("hour").get("sum").decimalValue()).isEqualTo(new BigDecimal(HOUR_SUM));
        assertThat(a.body()).doesNotContainPattern("[0-9][eE][+-]?[0-9]");
    }
}
