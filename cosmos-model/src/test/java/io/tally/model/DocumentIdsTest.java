package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class DocumentIdsTest {

    @Test
    void aBucketIdIsGradeUnitAndIndexAndParsesBackAlsoWhenAQualifierHoldsBars() {
        assertThat(BucketId.format("spend-per-customer", TimeUnit.HOUR, 493_000)).isEqualTo("spend-per-customer|hour|493000");
        assertThat(new BucketKey("shop", "c-1", "spend", TimeUnit.DAY, -3).id()).isEqualTo("spend|day|-3");
        assertThat(new BucketKey("shop", "c-1", "spend", TimeUnit.DAY, -3).updateKey()).isEqualTo("shop|c-1|spend|day|-3");

        assertThat(BucketId.parse("spend-per-customer-sku:a|b|day|20000"))
                .isEqualTo(new BucketId("spend-per-customer-sku:a|b", TimeUnit.DAY, 20_000));
        BucketId id = new BucketId("g", TimeUnit.MONTH, 671);
        assertThat(BucketId.parse(id.toString())).isEqualTo(id);
    }

    @Test
    void aMalformedBucketIdSaysWhichPartIsWrong() {
        assertThatThrownBy(() -> BucketId.parse("spend|hour")).hasMessage("id must look like {grade}|{unit}|{bucketIndex}");
        assertThatThrownBy(() -> BucketId.parse("|hour|1")).hasMessage("id must look like {grade}|{unit}|{bucketIndex}");
        assertThatThrownBy(() -> BucketId.parse("spend|week|1")).hasMessage("unknown unit in id (minute, hour, day or month)");
        assertThatThrownBy(() -> BucketId.parse("spend|hour|1.5")).hasMessage("id must end in a whole bucket index");
    }

    @Test
    void aGradeIdIsTheRuleNameOrNameColonQualifierValue() {
        assertThat(GradeId.format("spend-per-customer", null)).isEqualTo("spend-per-customer");
        assertThat(GradeId.format("spend-per-customer-sku", "sku:9")).isEqualTo("spend-per-customer-sku:sku:9");
        assertThat(GradeId.parse("spend-per-customer")).isEqualTo(new GradeId("spend-per-customer", Optional.empty()));
        assertThat(GradeId.parse("spend-per-customer-sku:sku:9")).isEqualTo(new GradeId("spend-per-customer-sku", Optional.of("sku:9")));
        assertThat(GradeId.parse("spend-per-customer-sku:sku:9")).hasToString("spend-per-customer-sku:sku:9");
    }
}
