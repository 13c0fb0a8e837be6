package io.tally.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class EntityBucketLayoutTest {

    @Test
    void aValuesPageIsFnv1aOfItsUtf8BytesSoEveryWriterAndReaderAgrees() {
        // Pinned from an independent FNV-1a (foobar -> 0xbf9cf968, the published test vector): a changed hash would
        // move every spilled value away from the page existing documents hold it on.
        assertThat(EntityBucketLayout.pageOf("", 16)).isEqualTo(5);
        assertThat(EntityBucketLayout.pageOf("a", 16)).isEqualTo(12);
        assertThat(EntityBucketLayout.pageOf("foobar", 16)).isEqualTo(0xbf9cf968 & 15);
        assertThat(EntityBucketLayout.pageOf("sku-1", 16)).isEqualTo(12);
        assertThat(EntityBucketLayout.pageOf("sku-42", 16)).isEqualTo(3);
        assertThat(EntityBucketLayout.pageOf("ü|€:😀", 16)).isEqualTo(1);
        assertThat(EntityBucketLayout.pageOf("ü|€:😀", 7)).as("the hash read unsigned, not String.hashCode").isEqualTo(6);
    }

    @Test
    void everyPageIsInRangeWhateverTheHashsSign() {
        for (int pages : new int[] {1, 2, 7, EntityBucketLayout.SPILL_PAGES, 1000}) {
            assertThat(IntStream.range(0, 5_000).map(i -> EntityBucketLayout.pageOf("q" + i + "é", pages)))
                    .as("%d pages", pages).allMatch(p -> p >= 0 && p < pages);
        }
    }

    @Test
    void tenThousandSimilarValuesSpreadRoughlyEvenlyOverThePages() {
        int pages = EntityBucketLayout.SPILL_PAGES;
        int[] perPage = new int[pages];
        for (int i = 0; i < 10_000; i++) perPage[EntityBucketLayout.pageOf("sku-" + i, pages)]++;
        int even = 10_000 / pages;
        assertThat(java.util.Arrays.stream(perPage).boxed().toList()).allMatch(n -> n > even * 0.85 && n < even * 1.15);
    }
}
