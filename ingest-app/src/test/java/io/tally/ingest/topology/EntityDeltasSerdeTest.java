package io.tally.ingest.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class EntityDeltasSerdeTest {
    private static final EntityDeltas.Delta HOUR = new EntityDeltas.Delta("spend-per-customer", TimeUnit.HOUR, 475_000L,
            EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX, 3_024_000);
    private static final EntityDeltas.Delta DAY = new EntityDeltas.Delta("spend-per-customer", TimeUnit.DAY, 19_800L,
            EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX, 3_024_000);
    private static final EntityDeltas.Delta SKU = new EntityDeltas.Delta("spend-per-customer-sku:sku-ü|7", TimeUnit.DAY, 19_800L,
            EntityDeltas.SUM, 3_024_000);
    private static final EntityDeltas.Delta ORDERS = new EntityDeltas.Delta("orders-per-email", TimeUnit.HOUR, -3L,
            EntityDeltas.VALUE_ONE, 604_800);

    @Test
    void roundTripsEveryFieldExactly() {
        EntityDeltas d = new EntityDeltas("shop|c-ß|1", new BigDecimal("12345678901234.5678"), List.of(HOUR, DAY, SKU, ORDERS));
        EntityDeltas back = EntityDeltasSerde.read(EntityDeltasSerde.write(d), "t");
        assertThat(back).isEqualTo(d);
        assertThat(back.amount().scale()).isEqualTo(4);
    }

    @Test
    void keepsAmountsBeyondALongExact() {
        BigDecimal huge = new BigDecimal("123456789012345678901234567890.1234");
        EntityDeltas back = EntityDeltasSerde.read(EntityDeltasSerde.write(new EntityDeltas("p|1", huge, List.of(DAY))), "t");
        assertThat(back.amount()).isEqualTo(huge);
    }

    @Test
    void refusesAnUnknownFormatAndTruncatedBytes() {
        byte[] bytes = EntityDeltasSerde.write(new EntityDeltas("p|1", BigDecimal.TEN, List.of(DAY)));
        assertThatThrownBy(() -> EntityDeltasSerde.read(Arrays.copyOf(bytes, bytes.length - 3), "t"))
                .isInstanceOf(SerializationException.class).hasMessageContaining("truncated");
        bytes[0] = 9;
        assertThatThrownBy(() -> EntityDeltasSerde.read(bytes, "t")).isInstanceOf(SerializationException.class)
                .hasMessageContaining("format 9");
    }
}
