package io.tally.rules.source;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Where a value sits in an event, as a user writes it: field names separated by dots ({@code customer.id}), a map
 * key as the next segment ({@code attributes.device}) or in brackets when it holds a dot ({@code attributes[device.id]}),
 * a union branch by its type name when the union has more than one ({@code payment.Card.last4}); optional
 * ({@code ["null", T]}) unions are passed through. Parsed once, when the rules and sources load; what each segment
 * means (field, key, branch) is only known against a schema ({@link SchemaPaths}).
 */
public final class FieldPath {
    private final String text;
    private final List<String> segments;

    private FieldPath(String text, List<String> segments) {
        this.text = text;
        this.segments = List.copyOf(segments);
    }

    /** Parses {@code text}; throws {@link IllegalArgumentException} with the reason when it is not a path. */
    public static FieldPath parse(String text) {
        if (text == null || text.isBlank()) throw new IllegalArgumentException("a field path must not be empty");
        List<String> segments = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int i = 0;
        boolean afterBracket = false;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '.') {
                if (cur.isEmpty() && !afterBracket) throw bad(text, "an empty segment at position " + (i + 1));
                if (!cur.isEmpty()) segments.add(cur.toString());
                cur.setLength(0);
                afterBracket = false;
                i++;
                if (i == text.length()) throw bad(text, "it ends with '.'");
            } else if (c == '[') {
                if (!cur.isEmpty()) segments.add(cur.toString());
                else if (segments.isEmpty()) throw bad(text, "it starts with a map key; name the map field first");
                cur.setLength(0);
                int close = text.indexOf(']', i + 1);
                if (close < 0) throw bad(text, "'[' at position " + (i + 1) + " is never closed");
                String key = text.substring(i + 1, close);
                if (key.length() >= 2 && key.startsWith("\"") && key.endsWith("\"")) key = key.substring(1, key.length() - 1);
                if (key.isEmpty()) throw bad(text, "an empty map key at position " + (i + 1));
                segments.add(key);
                afterBracket = true;
                i = close + 1;
                if (i < text.length() && text.charAt(i) != '.' && text.charAt(i) != '[') {
                    throw bad(text, "expected '.' or '[' after ']' at position " + (i + 1));
                }
            } else if (Character.isWhitespace(c)) {
                throw bad(text, "it contains whitespace; put a map key with spaces in brackets: field[key with spaces]");
            } else {
                if (afterBracket) throw bad(text, "expected '.' or '[' after ']' at position " + (i + 1));
                cur.append(c);
                i++;
            }
        }
        if (!cur.isEmpty()) segments.add(cur.toString());
        return new FieldPath(text, segments);
    }

    private static IllegalArgumentException bad(String text, String why) {
        return new IllegalArgumentException("'" + text + "' is not a field path: " + why);
    }

    public List<String> segments() {
        return segments;
    }

    @Override
    public String toString() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FieldPath p && p.segments.equals(segments);
    }

    @Override
    public int hashCode() {
        return Objects.hash(segments);
    }
}
