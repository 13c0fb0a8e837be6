package io.tally.rules.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class FieldPathTest {
    @Test
    void dotsSeparateSegments() {
        assertThat(FieldPath.parse("a").segments()).containsExactly("a");
        assertThat(FieldPath.parse("a.b.c").segments()).containsExactly("a", "b", "c");
    }

    @Test
    void aBracketedKeyKeepsItsDots() {
        assertThat(FieldPath.parse("attributes[device.id]").segments()).containsExactly("attributes", "device.id");
        assertThat(FieldPath.parse("attributes[\"device.id\"]").segments()).containsExactly("attributes", "device.id");
    }

    @Test
    void whitespaceIsAllowedInsideBracketsOnlyAndKeptAsWritten() {
        assertThat(FieldPath.parse("attributes[\"x y\"]").segments()).containsExactly("attributes", "x y");
        assertThat(FieldPath.parse("attributes[x y]").segments()).containsExactly("attributes", "x y");
        assertThat(FieldPath.parse("attributes[ x ]").segments()).containsExactly("attributes", " x ");
    }

    @Test
    void bracketsChainAndAreFollowedByDots() {
        assertThat(FieldPath.parse("a[b][c.d].e").segments()).containsExactly("a", "b", "c.d", "e");
    }

    @Test
    void pathsAreEqualWhenTheirSegmentsAreAndPrintAsWritten() {
        FieldPath dotted = FieldPath.parse("attributes.device");
        FieldPath bracketed = FieldPath.parse("attributes[device]");
        assertThat(bracketed).isEqualTo(dotted).hasSameHashCodeAs(dotted);
        assertThat(bracketed).hasToString("attributes[device]");
        assertThat(FieldPath.parse("a.b")).isNotEqualTo(FieldPath.parse("a[b.c]"));
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "  "})
    void anEmptyPathIsRefused(String text) {
        assertThatThrownBy(() -> FieldPath.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a field path must not be empty");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "a.         | it ends with '.'",
            "a[b].      | it ends with '.'",
            "a[b        | '[' at position 2 is never closed",
            ".a         | an empty segment at position 1",
            "a..b       | an empty segment at position 3",
            "a[b]..c    | an empty segment at position 6",
            "`a b`      | it contains whitespace; put a map key with spaces in brackets",
            "`a `       | it contains whitespace",
            "`a[b] .c`  | expected '.' or '[' after ']' at position 5",
            "[a]        | it starts with a map key; name the map field first",
            "a[]        | an empty map key at position 2",
            "`a[\"\"]`  | an empty map key at position 2",
            "a[b]c      | expected '.' or '[' after ']' at position 5",
    })
    void anInvalidPathIsRefusedSayingWhy(String text, String why) {
        assertThatThrownBy(() -> FieldPath.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("'" + text + "' is not a field path: " + why);
    }
}
