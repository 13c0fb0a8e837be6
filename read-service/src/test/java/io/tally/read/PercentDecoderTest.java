package io.tally.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class PercentDecoderTest {
    /** One value per character class a qualifier value or entity key may hold. */
    static List<String> awkward() {
        return List.of("sku-x/y~1.z", "back\\slash", "why?", "hash#tag", "bar|bar", "colon:colon", "100%", "%2F", "a+b",
                "two words", "\"double\" 'single'", "semi;colon&amp=eq", "é日本", "😀🇩🇪", "𝄞");
    }

    /** RFC 3986 encoding of every byte outside the unreserved set (URLEncoder differs only in writing a space as +). */
    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @ParameterizedTest
    @MethodSource("awkward")
    void anEncodedValueComesBackAsItWas(String value) {
        assertThat(PercentDecoder.pathSegment(enc(value))).isEqualTo(value);
        assertThat(PercentDecoder.query("/x?q=" + enc(value) + "&n=1")).isEqualTo(Map.of("q", List.of(value), "n", List.of("1")));
    }

    @Test
    void plusIsAPlusInAPathAndASpaceInAQuery() {
        assertThat(PercentDecoder.pathSegment("a+b%2Bc")).isEqualTo("a+b+c");
        assertThat(PercentDecoder.query("/x?q=a+b%2Bc").get("q")).containsExactly("a b+c");
    }

    @Test
    void onlyAnAmpersandSeparatesParameters() {
        Map<String, List<String>> p = PercentDecoder.query("/x?q=a;b=c&&r&s=&q=2#frag");
        assertThat(p).containsExactly(Map.entry("q", List.of("a;b=c", "2")), Map.entry("r", List.of("")), Map.entry("s", List.of("")));
        assertThat(PercentDecoder.query("/x")).isEmpty();
    }

    @Test
    void rawUtf8BytesAsNettyHandsThemOverAreDecodedToo() {
        String latin1View = new String("é😀|x".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
        assertThat(PercentDecoder.pathSegment(latin1View)).isEqualTo("é😀|x");
        assertThat(PercentDecoder.query("/x?q=" + latin1View).get("q")).containsExactly("é😀|x");
    }

    @Test
    void malformedEscapesAndBytesThatAreNotUtf8AreRefused() {
        for (String bad : List.of("%", "a%2", "%zz", "%C3", "%FF", "%ED%A0%80", "%C3%28")) {
            assertThatThrownBy(() -> PercentDecoder.pathSegment(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> PercentDecoder.query("/x?q=" + bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> PercentDecoder.pathSegment("€")).isInstanceOf(IllegalArgumentException.class);
    }
}
