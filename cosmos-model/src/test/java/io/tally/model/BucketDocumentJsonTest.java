package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BucketDocumentJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void writesWhatTheObjectMapperWroteSoTheSinkReadsTheSameJson() throws Exception {
        // bucket-updates is a contract: the streaming writer must give the object mapper's bytes, nulls left out.
        BucketDocument full = new BucketDocument("shop|c-1", "spend|hour|1", "spend", "hour", "1970-01-01T01:00:00Z",
                new BigDecimal("123456789012.3456"), 7, new BigDecimal("0.0001"), new BigDecimal("-5.50"), 42, 3024000,
                "2024-01-01T00:00:00Z");
        BucketDocument sparse = new BucketDocument("é|\"q\"\\ü", "n:sku/ä|day|-3", "n:sku/ä", "day", "x\n", null, 1, null, null, 1, null, null);
        BucketDocument odd = new BucketDocument("p|1", "g|day|1", "g", "day", "b", new BigDecimal("1E+3"), Long.MAX_VALUE,
                new BigDecimal("-0.000000001"), new BigDecimal(new java.math.BigInteger("123456789012345678901234567890"), 4), Long.MIN_VALUE,
                0, "");
        for (BucketDocument d : new BucketDocument[] {full, sparse, odd}) {
            byte[] bytes = BucketDocumentJson.write(d);
            assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo(JSON.writeValueAsString(d));
            assertThat(BucketDocumentJson.read(bytes)).isEqualTo(d);
        }
    }

    @Test
    void leavesOutAggregationsTheRuleDoesNotKeepAndReadsAnExplicitNullAsAbsent() {
        BucketDocument countOnly = new BucketDocument("shop|a@b", "orders|hour|7", "orders", "hour", "1970-01-01T07:00:00Z",
                null, 3, null, null, 3, 604800, "2026-01-01T00:00:00Z");
        String written = new String(BucketDocumentJson.write(countOnly), StandardCharsets.UTF_8);
        assertThat(written).doesNotContain("sum").doesNotContain("min").doesNotContain("max");

        String olderForm = written.replace("\"count\"", "\"sum\":null,\"min\":null,\"max\":null,\"count\"");
        assertThat(BucketDocumentJson.read(olderForm.getBytes(StandardCharsets.UTF_8))).isEqualTo(countOnly);
    }

    @Test
    void refusesWhatIsNotABucketDocumentAndSaysWhy() {
        assertThatThrownBy(() -> BucketDocumentJson.read("{not json".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Unexpected character");
        assertThatThrownBy(() -> BucketDocumentJson.read("{\"id\":\"g|day|1\",\"count\":1}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("no pk or id");
        assertThatThrownBy(() -> BucketDocumentJson.read("null".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("no pk or id");
        assertThatThrownBy(() -> BucketDocumentJson.read("{\"pk\":\"p|e\",\"id\":\"g|day|1\",\"count\":\"many\"}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("many");
    }
}
