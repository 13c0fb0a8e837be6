package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The metric names that the Grafana dashboards and the Prometheus alert rules under deploy/monitoring query, and
 * the check that a running app exports each of them: a renamed meter would otherwise leave an empty panel or an
 * alert that can never fire, and nobody would notice until the night it should have.
 */
public final class ReferencedMetrics {
    private static final Set<String> PROMQL_WORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
            "bool", "and", "or", "unless", "offset", "inf", "nan", "sum", "min", "max", "avg", "count", "stddev", "stdvar",
            "topk", "bottomk", "quantile", "count_values", "group");
    private static final Pattern GROUPING = Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_:][A-Za-z0-9_:]*");

    private ReferencedMetrics() {}

    /**
     * Every referenced name is a series of one of the scrapes (app name -> Prometheus text) or a recording rule.
     * Scrapes again until then or the timeout: Kafka's per-topic meters are registered a refresh after first use.
     */
    public static void assertAllExported(Supplier<Map<String, String>> scrape, Duration timeout) throws InterruptedException {
        Set<String> recorded = recordingRules(OpsFiles.rules());
        Map<String, String> referenced = referenced();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<String, String> scrapes = scrape.get();
            keep(scrapes);
            Set<String> exported = new TreeSet<>();
            scrapes.values().forEach(text -> exported.addAll(seriesNames(text)));
            Map<String, String> missing = new TreeMap<>();
            referenced.forEach((name, where) -> {
                if (!exported.contains(name) && !recorded.contains(name)) missing.put(name, where);
            });
            if (missing.isEmpty()) return;
            if (System.nanoTime() > deadline) {
                assertThat(missing).as("metrics referenced by deploy/monitoring (name -> file) that no running app (%s) exports "
                        + "(scrapes in target/ops-metrics)", scrapes.keySet()).isEmpty();
            }
            Thread.sleep(500);
        }
    }

    /** Leaves the scrapes in target/ops-metrics/APP.prom: the list to pick from when a panel or a rule is written. */
    private static void keep(Map<String, String> scrapes) {
        try {
            Path dir = Files.createDirectories(Path.of("target", "ops-metrics"));
            for (Map.Entry<String, String> e : scrapes.entrySet()) Files.writeString(dir.resolve(e.getKey() + ".prom"), e.getValue());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** metric name -> the first file that references it, over every dashboard and rule file. */
    public static Map<String, String> referenced() {
        Map<String, String> names = new TreeMap<>();
        for (Path dashboard : OpsFiles.dashboards()) {
            for (String expr : dashboardExpressions(read(dashboard, new ObjectMapper()))) {
                metricNames(expr).forEach(n -> names.putIfAbsent(n, OpsFiles.relative(dashboard)));
            }
        }
        for (Path rules : OpsFiles.rules()) {
            for (JsonNode rule : rules(rules)) {
                metricNames(rule.path("expr").asText()).forEach(n -> names.putIfAbsent(n, OpsFiles.relative(rules)));
            }
        }
        assertThat(names).as("metric names referenced under deploy/monitoring").isNotEmpty();
        return names;
    }

    /** The metric names in a PromQL expression (Grafana's $variables allowed). */
    static Set<String> metricNames(String expr) {
        String s = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"") // strings: label values, regexes
                .replaceAll("\\{[^}]*}", "") // label matchers
                .replaceAll("\\[[^]]*]", ""); // ranges and subqueries
        s = GROUPING.matcher(s).replaceAll(" ");
        s = s.replaceAll("\\$\\{?[A-Za-z_]+}?", " "); // Grafana variables
        Set<String> names = new TreeSet<>();
        Matcher m = IDENTIFIER.matcher(s);
        while (m.find()) {
            String word = m.group();
            if (m.start() > 0 && Character.isDigit(s.charAt(m.start() - 1))) continue; // the unit of 5m, 1e3
            if (s.substring(m.end()).matches("(?s)\\s*\\(.*")) continue; // a function or an aggregation
            if (PROMQL_WORDS.contains(word.toLowerCase())) continue;
            names.add(word);
        }
        return names;
    }

    static List<String> dashboardExpressions(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node.isObject()) {
            node.fields().forEachRemaining(e -> {
                if ((e.getKey().equals("expr") || e.getKey().equals("query")) && e.getValue().isTextual()) out.add(e.getValue().asText());
                else out.addAll(dashboardExpressions(e.getValue()));
            });
        } else if (node.isArray()) {
            node.forEach(n -> out.addAll(dashboardExpressions(n)));
        }
        return out;
    }

    static List<JsonNode> rules(Path file) {
        List<JsonNode> out = new ArrayList<>();
        read(file, new ObjectMapper(new YAMLFactory())).path("groups").forEach(g -> g.path("rules").forEach(out::add));
        return out;
    }

    private static Set<String> recordingRules(List<Path> files) {
        Set<String> names = new TreeSet<>();
        files.forEach(f -> rules(f).stream().filter(r -> r.has("record")).forEach(r -> names.add(r.get("record").asText())));
        return names;
    }

    /** Series names of a Prometheus text exposition. */
    static Set<String> seriesNames(String text) {
        Set<String> names = new TreeSet<>();
        text.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).forEach(l -> {
            Matcher m = IDENTIFIER.matcher(l);
            if (m.lookingAt()) names.add(m.group());
        });
        return names;
    }

    private static JsonNode read(Path file, ObjectMapper mapper) {
        try {
            return mapper.readTree(file.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Stream<Path> list(Path dir, String glob) {
        try {
            List<Path> files = new ArrayList<>();
            try (var ds = Files.newDirectoryStream(dir, glob)) {
                ds.forEach(files::add);
            }
            return files.stream().sorted();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
