package io.tally.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class HelpTest {
    static final List<Setting<?>> SETTINGS = List.of(
            Setting.integer("http.port", 8080, "Port to bind."),
            Setting.optionalString("topics.prefix", "", "Prefix of every topic."),
            Setting.string("cosmos.key", "abc", "Master key.").secret(),
            Setting.string("replay.from", null, "Start of the range.").required(),
            Setting.string("long.doc", "x", "word ".repeat(60)));

    @Test
    void helpIsAskedForAnywhereOnTheLine() {
        assertThat(Help.requested(new String[] {"--http.port=1", "--help"})).isTrue();
        assertThat(Help.requested(new String[] {"-h"})).isTrue();
        assertThat(Help.requested(new String[] {"--http.port=1", "--helpful=true"})).isFalse();
    }

    @Test
    void listsFlagEnvironmentNameDefaultAndDescriptionOfEverySetting() {
        String text = Help.text("Usage: app [--key=value ...]\n", SETTINGS);
        assertThat(text).startsWith("Usage: app [--key=value ...]\n\nSettings (defaults < --config FILE or TALLY_CONFIG")
                .contains("  --http.port (TALLY_HTTP_PORT), default 8080\n      Port to bind.\n",
                        "  --topics.prefix (TALLY_TOPICS_PREFIX), default empty\n",
                        "  --cosmos.key (TALLY_COSMOS_KEY), default hidden (secret)\n",
                        "  --replay.from (TALLY_REPLAY_FROM), required\n")
                .doesNotContain("abc");
        assertThat(text.lines()).allSatisfy(l -> assertThat(l.length()).as(l).isLessThanOrEqualTo(Help.WIDTH));
    }
}
