package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.BucketDocument;
import java.math.BigDecimal;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class CompactBucketSerdeTest {
    @Test
    void roundTripsFullAndSparseDocumentsExactly() {
        BucketDocument full = new BucketDocument("shop|c-1", "spend|hour|1", "spend", "hour", "1970-01-01T01:00:00Z",
                new BigDecimal("123456789012.3456"), 7, new BigDecimal("0.0001"), new BigDecimal("-5.50"), 42, 3024000,
                "2024-01-01T00:00:00Z");
        BucketDocument sparse = new BucketDocument("é|ü", "n:sku/ä|day|-3", "n:sku/ä", "day", "x", null, 1, null, null, 1, null, null);
        var serde = CompactBucketSerde.serde();
        for (BucketDocument d : new BucketDocument[] {full, sparse}) {
            assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", d))).isEqualTo(d);
        }
        assertThat(serde.serializer().serialize("t", null)).isNull();
        // Scale survives: 5.50 and 5.5 are different decimals, and equals() says so.
        assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", full)).max().scale()).isEqualTo(2);
    }

    @Test
    void anUnknownFormatIsAClearError() {
        assertThatThrownBy(() -> CompactBucketSerde.serde().deserializer().deserialize("t", new byte[] {9, 0}))
                .isInstanceOf(SerializationException.class).hasMessageContaining("unknown bucket format 9");
    }
}
