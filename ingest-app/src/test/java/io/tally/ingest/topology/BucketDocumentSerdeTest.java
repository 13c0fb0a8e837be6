package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.model.BucketDocument;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BucketDocumentSerdeTest {
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
        var serde = BucketDocumentSerde.serde();
        for (BucketDocument d : new BucketDocument[] {full, sparse, odd}) {
            byte[] bytes = serde.serializer().serialize("t", d);
            assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo(JSON.writeValueAsString(d));
            assertThat(serde.deserializer().deserialize("t", bytes)).isEqualTo(d);
        }
        assertThat(serde.serializer().serialize("t", null)).isNull();
    }
}
