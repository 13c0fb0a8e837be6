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
    private static final BigDecimal AMOUNT = new BigDecimal("12345678901234.5678");
    private static final EntityDeltas.Delta HOUR = EntityDeltas.Delta.of("spend-per-customer", null, TimeUnit.HOUR, 475_000L,
            EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX, 3_024_000, AMOUNT);
    private static final EntityDeltas.Delta DAY = EntityDeltas.Delta.of("spend-per-customer", null, TimeUnit.DAY, 19_800L,
            EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX, 3_024_000, AMOUNT)
            .plus(EntityDeltas.Delta.of("spend-per-customer", null, TimeUnit.DAY, 19_800L,
                    EntityDeltas.SUM | EntityDeltas.MIN | EntityDeltas.MAX, 3_024_000, new BigDecimal("0.01")));
    private static final EntityDeltas.Delta SKU = EntityDeltas.Delta.of("spend-per-customer-sku", "sku-ü|7:x", TimeUnit.DAY, 19_800L,
            EntityDeltas.SUM, 3_024_000, AMOUNT);
    private static final EntityDeltas.Delta SKU_HOUR = EntityDeltas.Delta.of("spend-per-customer-sku", "sku-ü|7:x", TimeUnit.HOUR,
            475_000L, EntityDeltas.SUM, 3_024_000, AMOUNT);
    private static final EntityDeltas.Delta EMPTY_QUALIFIER = EntityDeltas.Delta.of("spend-per-customer-sku", "", TimeUnit.DAY,
            19_800L, EntityDeltas.SUM, 3_024_000, AMOUNT);
    private static final EntityDeltas.Delta ORDERS = EntityDeltas.Delta.of("orders-per-email", null, TimeUnit.HOUR, -3L,
            EntityDeltas.VALUE_ONE, 604_800, AMOUNT);

    @Test
    void roundTripsEveryFieldExactly() {
        EntityDeltas d = new EntityDeltas("shop|c-ß|1", List.of(HOUR, DAY, SKU, SKU_HOUR, EMPTY_QUALIFIER, ORDERS));
        EntityDeltas back = EntityDeltasSerde.read(EntityDeltasSerde.write(d), "t");
        assertThat(back).isEqualTo(d);
        assertThat(back.deltas()).extracting(EntityDeltas.Delta::qualifier)
                .as("no qualifier stays apart from an empty one").containsExactly(null, null, "sku-ü|7:x", "sku-ü|7:x", "", null);
        assertThat(back.deltas().get(2).grade()).isEqualTo("spend-per-customer-sku:sku-ü|7:x");
        assertThat(back.deltas().get(0).sum().scale()).isEqualTo(4);
        assertThat(back.deltas().get(1)).satisfies(day -> {
            assertThat(day.count()).isEqualTo(2);
            assertThat(day.sum()).isEqualTo(new BigDecimal("12345678901234.5778"));
            assertThat(day.min()).isEqualTo(new BigDecimal("0.01"));
            assertThat(day.max()).isEqualTo(AMOUNT);
        });
        assertThat(back.deltas().get(5)).satisfies(orders -> { // counts only: nothing else travels
            assertThat(orders.count()).isEqualTo(1);
            assertThat(orders.sum()).isNull();
            assertThat(orders.min()).isNull();
            assertThat(orders.max()).isNull();
        });
    }

    @Test
    void keepsAmountsBeyondALongExact() {
        BigDecimal huge = new BigDecimal("123456789012345678901234567890.1234");
        EntityDeltas.Delta d = EntityDeltas.Delta.of("g", null, TimeUnit.DAY, 1, EntityDeltas.SUM | EntityDeltas.MAX, 60, huge);
        EntityDeltas back = EntityDeltasSerde.read(EntityDeltasSerde.write(new EntityDeltas("p|1", List.of(d, d.plus(d)))), "t");
        assertThat(back.deltas().get(0).sum()).isEqualTo(huge);
        assertThat(back.deltas().get(1).sum()).isEqualTo(huge.add(huge));
        assertThat(back.deltas().get(1).max()).isEqualTo(huge);
    }

    @Test
    void refusesAnUnknownFormatAndTruncatedBytes() {
        byte[] bytes = EntityDeltasSerde.write(new EntityDeltas("p|1", List.of(DAY)));
        assertThatThrownBy(() -> EntityDeltasSerde.read(Arrays.copyOf(bytes, bytes.length - 3), "t"))
                .isInstanceOf(SerializationException.class).hasMessageContaining("truncated");
        bytes[0] = 9;
        assertThatThrownBy(() -> EntityDeltasSerde.read(bytes, "t")).isInstanceOf(SerializationException.class)
                .hasMessageContaining("format 9");
    }

    @Test
    void carriesTheRulesGenerationAndReadsTheFormatBeforeItAsGenerationZero() {
        EntityDeltas d = new EntityDeltas("p|1", List.of(DAY, HOUR), 5);
        byte[] bytes = EntityDeltasSerde.write(d);
        assertThat(EntityDeltasSerde.read(bytes, "t")).isEqualTo(d);
        byte[] before = new byte[bytes.length - 8]; // format 2: no generation after the version byte
        before[0] = 2;
        System.arraycopy(bytes, 9, before, 1, bytes.length - 9);
        EntityDeltas old = EntityDeltasSerde.read(before, "t");
        assertThat(old.generation()).isZero();
        assertThat(old.deltas()).isEqualTo(d.deltas());
    }
}
