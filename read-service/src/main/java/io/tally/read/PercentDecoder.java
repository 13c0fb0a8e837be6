package io.tally.read;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Percent-decoding of the request target (RFC 3986) into the values the routes read. Pure and thread-safe.
 *
 * <p>Reactor Netty matches route templates against the raw request target and hands out path variables still encoded,
 * so a segment holding {@code %2F} stays one segment; it is decoded here, after routing. Decoding is byte-wise: each
 * {@code %XX} is one byte, and the bytes are read as UTF-8 that must be well formed (a lossy decoder would answer for
 * a key nobody stored). A raw character outside ASCII in the target is taken as the byte it arrived as (Netty reads
 * the request line as ISO-8859-1), so a client sending raw UTF-8 is understood too.
 *
 * <p>A path segment keeps {@code +} as a plus (RFC 3986). In the query string {@code +} is a space, as in HTML form
 * encoding, which is what URLSearchParams, {@code java.net.URLEncoder} and most HTTP clients send; they encode a plus
 * as {@code %2B}. Only {@code &} separates parameters ({@code ;} is data).
 */
final class PercentDecoder {
    private PercentDecoder() {}

    /**
     * One path segment, decoded.
     *
     * @throws IllegalArgumentException on a malformed escape or bytes that are not UTF-8
     */
    static String pathSegment(String raw) {
        return decode(raw, 0, raw.length(), false);
    }

    /**
     * The query parameters of a request target ({@code path?query}), in order of first appearance, each with every
     * value it was given. A name without {@code =} has the empty value; empty pieces ({@code a=1&&b=2}) are skipped.
     *
     * @throws IllegalArgumentException on a malformed escape or bytes that are not UTF-8
     */
    static Map<String, List<String>> query(String target) {
        Map<String, List<String>> params = new LinkedHashMap<>();
        int start = target.indexOf('?');
        if (start < 0) return params;
        int end = target.indexOf('#', start); // clients never send a fragment; a raw one is not part of the query
        if (end < 0) end = target.length();
        for (int i = start + 1; i < end; ) {
            int amp = target.indexOf('&', i);
            if (amp < 0 || amp > end) amp = end;
            if (amp > i) {
                int eq = target.indexOf('=', i);
                if (eq < 0 || eq > amp) eq = amp;
                String name = decode(target, i, eq, true);
                String value = eq < amp ? decode(target, eq + 1, amp, true) : "";
                params.computeIfAbsent(name, n -> new ArrayList<>(1)).add(value);
            }
            i = amp + 1;
        }
        return params;
    }

    private static String decode(String s, int from, int to, boolean plusIsSpace) {
        boolean plain = true;
        for (int i = from; i < to && plain; i++) {
            char c = s.charAt(i);
            plain = c < 0x80 && c != '%' && !(plusIsSpace && c == '+');
        }
        if (plain) return s.substring(from, to);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(to - from);
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= to) throw new IllegalArgumentException("incomplete percent escape");
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) throw new IllegalArgumentException("malformed percent escape");
                bytes.write(hi << 4 | lo);
                i += 2;
            } else if (plusIsSpace && c == '+') {
                bytes.write(' ');
            } else if (c <= 0xFF) {
                bytes.write(c);
            } else {
                throw new IllegalArgumentException("a request target is bytes: no character above U+00FF");
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("not UTF-8");
        }
    }
}
