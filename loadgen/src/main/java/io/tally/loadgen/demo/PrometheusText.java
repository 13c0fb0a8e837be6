package io.tally.loadgen.demo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The samples of a Prometheus text exposition (format 0.0.4, what ingest-app's metrics endpoint serves):
 * {@code name{label="value",...} value [timestamp]} a line, {@code #} lines (HELP, TYPE) skipped. Label
 * values may hold escaped quotes, backslashes and newlines, and commas or braces inside quotes.
 */
final class PrometheusText {
    /** One sample; the value may be NaN or infinite, as the format allows. */
    record Sample(String name, Map<String, String> labels, double value) {
        String label(String key) {
            return labels.get(key);
        }
    }

    private PrometheusText() {}

    /** @throws IllegalArgumentException naming the line, for a line that is not a sample */
    static List<Sample> parse(String text) {
        List<Sample> samples = new ArrayList<>();
        int number = 0;
        for (String line : text.split("\n", -1)) {
            number++;
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) continue;
            try {
                samples.add(sample(trimmed));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("line " + number + " is not a Prometheus sample (" + e.getMessage() + "): " + line, e);
            }
        }
        return samples;
    }

    private static Sample sample(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && !Character.isWhitespace(line.charAt(i))) i++;
        String name = line.substring(0, i);
        if (name.isEmpty()) throw new IllegalArgumentException("no metric name");
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') i = labels(line, i + 1, labels);
        String[] rest = line.substring(i).strip().split("\\s+");
        if (rest.length < 1 || rest.length > 2 || rest[0].isEmpty()) throw new IllegalArgumentException("expected a value and an optional timestamp");
        return new Sample(name, labels, value(rest[0]));
    }

    /** Reads {@code key="value",...}} from {@code i} into {@code labels}; returns the index after the brace. */
    private static int labels(String line, int i, Map<String, String> labels) {
        while (true) {
            while (i < line.length() && (line.charAt(i) == ',' || line.charAt(i) == ' ')) i++;
            if (i >= line.length()) throw new IllegalArgumentException("unclosed label set");
            if (line.charAt(i) == '}') return i + 1;
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') throw new IllegalArgumentException("expected key=\"value\"");
            String key = line.substring(i, eq).strip();
            StringBuilder value = new StringBuilder();
            i = eq + 2;
            while (true) {
                if (i >= line.length()) throw new IllegalArgumentException("unclosed label value");
                char c = line.charAt(i++);
                if (c == '"') break;
                if (c == '\\' && i < line.length()) {
                    char e = line.charAt(i++);
                    value.append(e == 'n' ? '\n' : e);
                } else {
                    value.append(c);
                }
            }
            labels.put(key, value.toString());
        }
    }

    private static double value(String text) {
        return switch (text) {
            case "NaN" -> Double.NaN;
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(text);
        };
    }
}
