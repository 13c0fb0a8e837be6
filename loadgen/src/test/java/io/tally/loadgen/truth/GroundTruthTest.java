package io.tally.loadgen.truth;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.loadgen.rules.RuleSet;
import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ground-truth evaluator on a handcrafted stream whose buckets were computed by hand (the indexes
 * with a calculator: 2026-03-01T00:00Z is hour 492312, day 20513; months count from 1970-01 = 0, so
 * 2026-01 is 672). Every record gets the same Kafka timestamp T = 2026-03-01T00:30Z.
 */
class GroundTruthTest {
    static final String RULES = """
            rules:
              - name: spend
                entity: customerId
                filter: {field: status, in: [APPROVED]}
                value: amount
                aggregations: [sum, count, min, max]
                units: [hour, month]
                retention: P35D
              - name: spend-sku
                entity: customerId
                qualifier: sku
                value: amount
                aggregations: [sum]
                units: [day]
                retention: P35D
              - name: orders-per-email
                entity: email
                value: one
                aggregations: [count]
                units: [hour]
                retention: P7D
            """;
    static final Instant T = Instant.parse("2026-03-01T00:30:00Z");

    GroundTruth truth;

    @BeforeEach
    void feed() {
        truth = new GroundTruth(RuleSet.parse(RULES, "test"), Duration.ofMinutes(5));
        // e1: one millisecond before the day and month boundary.
        truth.onEvent(ev("tx1", "c1", "a@x", "s1", "APPROVED", "10", "2026-02-28T23:59:59.999Z"), T);
        // e2: exactly on the hour, day and month boundary: belongs to the new ones.
        truth.onEvent(ev("tx2", "c1", "a@x", "s1", "APPROVED", "2.5", "2026-03-01T00:00:00Z"), T);
        // e3: DECLINED: filtered out of spend; spend-sku has no filter; no e-mail, so no orders-per-email.
        truth.onEvent(ev("tx3", "c1", null, "s2", "DECLINED", "100", "2026-03-01T00:10:00Z"), T);
        // e4: exact duplicate of e2: counts once.
        truth.onEvent(ev("tx2", "c1", "a@x", "s1", "APPROVED", "2.5", "2026-03-01T00:00:00Z"), T);
        // e5: 10 days old: beyond orders-per-email's 7 days, within spend's 35.
        truth.onEvent(ev("tx5", "c1", "a@x", "s1", "APPROVED", "1", "2026-02-19T00:30:00Z"), T);
        // e6: exactly the allowed skew (5 min) ahead: still counts.
        truth.onEvent(ev("tx6", "c2", null, "s1", "APPROVED", "4", "2026-03-01T00:35:00Z"), T);
        // e7: 1 ms beyond the skew: FUTURE.
        truth.onEvent(ev("tx7", "c2", null, "s1", "APPROVED", "4", "2026-03-01T00:35:00.001Z"), T);
        // e8: 1 ms older than the longest retention (35 days): LATE.
        truth.onEvent(ev("tx8", "c3", "b@x", "s3", "APPROVED", "7", "2026-01-25T00:29:59.999Z"), T);
        // e9: exactly 35 days old: counts for the 35-day rules, not for the 7-day one.
        truth.onEvent(ev("tx9", "c3", "b@x", "s3", "APPROVED", "7", "2026-01-25T00:30:00Z"), T);
        // e10, e11: required values empty: INVALID.
        truth.onEvent(ev("", "c1", "a@x", "s1", "APPROVED", "1", "2026-03-01T00:00:00Z"), T);
        truth.onEvent(ev("tx11", "", "a@x", "s1", "APPROVED", "1", "2026-03-01T00:00:00Z"), T);
        truth.onUndecodable();
    }

    @Test
    void countsEachRecordOnceOrOnTheDlqWithItsReason() {
        assertThat(truth.accepted()).isEqualTo(6); // e1 e2 e3 e5 e6 e9
        assertThat(truth.duplicates()).isEqualTo(1);
        assertThat(truth.expectedDlq()).isEqualTo(Map.of("DECODE_FAILED", 1L, "INVALID", 2L, "LATE", 1L, "FUTURE", 1L));
        assertThat(truth.documents()).isEqualTo(17);
    }

    @Test
    void bucketsMatchTheHandComputedValues() {
        bucket("d|c1", "spend|hour|492311", "10", 1, "10", "10");     // e1
        bucket("d|c1", "spend|hour|492312", "2.5", 1, "2.5", "2.5");  // e2 (e4 is its duplicate)
        bucket("d|c1", "spend|hour|492072", "1", 1, "1", "1");        // e5
        bucket("d|c1", "spend|month|673", "11", 2, "1", "10");        // e1 + e5, February
        bucket("d|c1", "spend|month|674", "2.5", 1, "2.5", "2.5");    // e2, March
        bucket("d|c2", "spend|hour|492312", "4", 1, "4", "4");        // e6
        bucket("d|c2", "spend|month|674", "4", 1, "4", "4");
        bucket("d|c3", "spend|hour|491472", "7", 1, "7", "7");        // e9
        bucket("d|c3", "spend|month|672", "7", 1, "7", "7");          // January
        bucket("d|c1", "spend-sku:s1|day|20512", "10", 1, "10", "10");
        bucket("d|c1", "spend-sku:s1|day|20513", "2.5", 1, "2.5", "2.5");
        bucket("d|c1", "spend-sku:s2|day|20513", "100", 1, "100", "100"); // e3: no filter on this rule
        bucket("d|c1", "spend-sku:s1|day|20503", "1", 1, "1", "1");
        bucket("d|c2", "spend-sku:s1|day|20513", "4", 1, "4", "4");
        bucket("d|c3", "spend-sku:s3|day|20478", "7", 1, "7", "7");
        assertThat(truth.bucket("d|a@x", "orders-per-email|hour|492311").count()).isEqualTo(1);
        assertThat(truth.bucket("d|a@x", "orders-per-email|hour|492312").count()).isEqualTo(1);
        assertThat(truth.bucket("d|a@x", "orders-per-email|hour|492072")).as("e5 is older than 7 days").isNull();
        assertThat(truth.bucket("d|b@x", "orders-per-email|hour|491472")).as("e9 is older than 7 days").isNull();
        assertThat(truth.bucket("d|c1", "spend|hour|492313")).isNull();
    }

    @Test
    void writesOnlyTheRulesAggregationsAsPlainDecimals(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("sub/truth.json");
        truth.write(file, Map.of("seed", 1));
        JsonNode json = new ObjectMapper().readTree(file.toFile());
        JsonNode b = json.at("/buckets/d|c1/spend|month|673");
        assertThat(b.get("sum").decimalValue()).isEqualByComparingTo("11");
        assertThat(java.nio.file.Files.readString(file)).contains("\"sum\" : 11.0000,"); // plain, at the amounts' scale
        assertThat(b.get("count").asLong()).isEqualTo(2);
        assertThat(b.get("min").decimalValue()).isEqualByComparingTo("1");
        JsonNode sku = json.at("/buckets/d|c1/spend-sku:s1|day|20512");
        assertThat(sku.fieldNames()).toIterable().containsExactly("sum");
        assertThat(json.at("/buckets/d|a@x/orders-per-email|hour|492311").toString()).isEqualTo("{\"count\":1}");
        assertThat(json.at("/expected/dlq/LATE").asLong()).isEqualTo(1);
        assertThat(json.at("/expected/dlqTotal").asLong()).isEqualTo(5);
        assertThat(json.at("/run/seed").asInt()).isEqualTo(1);
    }

    private void bucket(String pk, String id, String sum, long count, String min, String max) {
        BucketValue v = truth.bucket(pk, id);
        assertThat(v).as(pk + " " + id).isNotNull();
        assertThat(v.sum()).as(id + " sum").isEqualByComparingTo(sum);
        assertThat(v.count()).as(id + " count").isEqualTo(count);
        assertThat(v.min()).as(id + " min").isEqualByComparingTo(min);
        assertThat(v.max()).as(id + " max").isEqualByComparingTo(max);
    }

    static TransactionEvent ev(String tx, String customer, String email, String sku, String status, String amount, String time) {
        return TransactionEvent.newBuilder()
                .setTransactionId(tx).setEventTime(Instant.parse(time)).setDomain("d").setCustomerId(customer)
                .setEmail(email).setPostalCode(null).setSku(sku).setMerchant("m").setChannel("WEB")
                .setAmount(new BigDecimal(amount).setScale(4)).setCurrency("USD").setStatus(status)
                .setAttributes(Map.of()).build();
    }
}
