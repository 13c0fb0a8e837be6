package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class EntityBucketIdTest {

    @Test
    void aMainDocumentIsUnitAndIndexAndASpillPageAddsRuleAndPage() {
        assertThat(EntityBucketId.main(TimeUnit.DAY, 20_419)).isEqualTo("day|20419");
        assertThat(EntityBucketId.page(TimeUnit.HOUR, -3, "spend-per-customer-sku", 15)).isEqualTo("hour|-3|spend-per-customer-sku|15");

        EntityBucketId main = EntityBucketId.parse("day|20419");
        assertThat(main).isEqualTo(new EntityBucketId(TimeUnit.DAY, 20_419, null, -1));
        assertThat(main.isPage()).isFalse();
        assertThat(main).hasToString("day|20419");
        EntityBucketId page = EntityBucketId.parse("hour|-3|spend-per-customer-sku|15");
        assertThat(page).isEqualTo(new EntityBucketId(TimeUnit.HOUR, -3, "spend-per-customer-sku", 15));
        assertThat(page.isPage()).isTrue();
        assertThat(page).hasToString("hour|-3|spend-per-customer-sku|15");
        assertThat(EntityBucketId.parse(EntityBucketId.main(TimeUnit.MONTH, Long.MAX_VALUE)).bucketIndex()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aMalformedIdIsRefusedSayingWhatIsWrong() {
        String shape = "entity bucket id must look like {unit}|{bucketIndex}[|{rule}|{page}]";
        for (String id : new String[] {"day", "day|1|rule", "day|1|rule|2|3", ""}) {
            assertThatThrownBy(() -> EntityBucketId.parse(id)).as(id).isInstanceOf(IllegalArgumentException.class).hasMessage(shape);
        }
        String notWhole = "entity bucket id holds a bucket index or page that is not a whole number";
        for (String id : new String[] {"day|x", "day|1.5", "day|1|rule|p", "day||rule|1"}) {
            assertThatThrownBy(() -> EntityBucketId.parse(id)).as(id).isInstanceOf(IllegalArgumentException.class).hasMessage(notWhole);
        }
        assertThatThrownBy(() -> EntityBucketId.parse("week|1")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown unit");
    }
}
