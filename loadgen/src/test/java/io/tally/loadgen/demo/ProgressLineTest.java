package io.tally.loadgen.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProgressLineTest {
    static final Progress P = new Progress(12_345, 67, 8_000, 3, 7_900, 1_234_567, 2, 0, 99_999, 1_042, 100, 0);
    static final String WIDE = "  17s  produced 12,400/24,000  ingested 12,345  updates 7,900  docs 1,234,567  lag 67+100  5,820 RU/s  429s 1,042";
    static final String NARROW = "17s prod 12,400/24,000 in 12,345 upd 7,900 docs 1,234,567 lag 67+100 5,820 RU/s 429s 1,042";

    @Test
    void notOnATerminalTheLineIsNeverShortened() {
        assertThat(ProgressLine.format(17, 12_400, 24_000, P, 5_820, 0)).isEqualTo(WIDE);
    }

    @Test
    void aTerminalWiderThanTheLineShowsItWhole() {
        assertThat(ProgressLine.format(17, 12_400, 24_000, P, 5_820, WIDE.length() + 1)).isEqualTo(WIDE);
    }

    @Test
    void aNarrowerTerminalGetsShorterLabelsThenACut() {
        // A line exactly as wide as the terminal would wrap too: the cursor moves past the last column.
        assertThat(ProgressLine.format(17, 12_400, 24_000, P, 5_820, WIDE.length())).isEqualTo(NARROW);
        assertThat(ProgressLine.format(17, 12_400, 24_000, P, 5_820, NARROW.length() + 1)).isEqualTo(NARROW);
        assertThat(ProgressLine.format(17, 12_400, 24_000, P, 5_820, 40)).isEqualTo(NARROW.substring(0, 39));
    }

    @Test
    void groupsThousands() {
        assertThat(ProgressLine.group(0)).isEqualTo("0");
        assertThat(ProgressLine.group(999)).isEqualTo("999");
        assertThat(ProgressLine.group(1000)).isEqualTo("1,000");
        assertThat(ProgressLine.group(1_234_567)).isEqualTo("1,234,567");
        assertThat(ProgressLine.group(-1234)).isEqualTo("-1,234");
    }
}
