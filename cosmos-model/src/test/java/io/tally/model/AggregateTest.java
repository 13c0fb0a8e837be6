package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

class AggregateTest {
    private static Aggregate of(String sum, long count, String min, String max) {
        return new Aggregate(sum == null ? null : new BigDecimal(sum), count,
                min == null ? null : new BigDecimal(min), max == null ? null : new BigDecimal(max));
    }

    @Test
    void combinesExactlyInDecimals() {
        Aggregate a = of("0.1", 1, "0.1", "0.1");
        Aggregate b = of("0.2", 2, "-7.50", "0.05");
        assertThat(a.plus(b)).isEqualTo(of("0.3", 3, "-7.50", "0.1"));
        assertThat(b.plus(a)).isEqualTo(of("0.3", 3, "-7.50", "0.1"));
    }

    @Test
    void nullIsNotAggregatedAndNeitherWinsNorAdds() {
        Aggregate countOnly = of(null, 4, null, null);
        assertThat(countOnly.plus(countOnly)).isEqualTo(of(null, 8, null, null));
        assertThat(Aggregate.NONE.plus(of("5", 1, "5", "5"))).isEqualTo(of("5", 1, "5", "5"));
        assertThat(of("5", 1, "5", "5").plus(Aggregate.NONE)).isEqualTo(of("5", 1, "5", "5"));
    }

    @Test
    void equalValuesOfDifferentScaleKeepTheFirst() {
        // compareTo, not equals: 2.0 and 2.00 are the same amount; the bucket keeps the one it had.
        assertThat(Aggregate.min(new BigDecimal("2.0"), new BigDecimal("2.00"))).hasToString("2.0");
        assertThat(Aggregate.max(new BigDecimal("2.0"), new BigDecimal("2.00"))).hasToString("2.0");
    }
}
