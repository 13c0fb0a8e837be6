package io.tally.loadgen.rules;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The grade rules, parsed and checked. Every problem in the file is reported at once, with the rule's
 * position and name, so a broken rules file is fixed in one pass. Immutable.
 */
public record RuleSet(List<Rule> rules) {
    private static final Pattern NAME = Pattern.compile("[a-z0-9-]+");
    private static final Set<String> RULE_KEYS =
            Set.of("name", "entity", "qualifier", "filter", "value", "aggregations", "units", "retention");

    /** The longest retention: an event older than this counts for no rule at all (it is LATE). */
    public Duration lateBound() {
        return rules.stream().map(Rule::retention).max(Comparator.naturalOrder()).orElse(Duration.ZERO);
    }

    /**
     * Reads a rules file. A relative path that does not exist in the working directory is looked up in
     * its parents, so the default {@code rules/default-rules.yaml} is found from a module directory too.
     */
    public static RuleSet load(Path file) {
        Path found = locate(file);
        try {
            return parse(Files.readString(found), found.toString());
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read rules file " + found + ": " + e.getMessage(), e);
        }
    }

    static Path locate(Path file) {
        if (file.isAbsolute() || Files.exists(file)) return file;
        for (Path dir = Path.of("").toAbsolutePath().getParent(); dir != null; dir = dir.getParent()) {
            if (Files.exists(dir.resolve(file))) return dir.resolve(file);
        }
        return file; // reading fails and names the path as given
    }

    public static RuleSet parse(String yaml, String source) {
        JsonNode root;
        try {
            root = new YAMLMapper().readTree(yaml);
        } catch (IOException e) {
            throw new IllegalArgumentException("rules file " + source + " is not valid YAML: " + e.getMessage(), e);
        }
        List<String> problems = new ArrayList<>();
        List<Rule> rules = new ArrayList<>();
        JsonNode list = root == null ? null : root.get("rules");
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw new IllegalArgumentException("rules file " + source + ": expected a non-empty list under 'rules'");
        }
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode r = list.get(i);
            String where = source + " rule " + (i + 1) + (r.hasNonNull("name") ? " (" + r.get("name").asText() + ")" : "");
            int before = problems.size();
            Rule rule = parseRule(r, where, problems);
            if (problems.size() == before) {
                if (!names.add(rule.name())) problems.add(where + ": duplicate rule name");
                rules.add(rule);
            }
        }
        if (!problems.isEmpty()) throw new IllegalArgumentException("invalid rules:\n  - " + String.join("\n  - ", problems));
        return new RuleSet(List.copyOf(rules));
    }

    private static Rule parseRule(JsonNode r, String where, List<String> problems) {
        for (Iterator<String> it = r.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!RULE_KEYS.contains(k)) problems.add(where + ": unknown key '" + k + "'");
        }
        String name = text(r, "name", where, problems);
        if (name != null && !NAME.matcher(name).matches()) problems.add(where + ": name must match [a-z0-9-]+");
        String entity = field(r, "entity", where, problems, true);
        Optional<String> qualifier = Optional.ofNullable(field(r, "qualifier", where, problems, false));
        Optional<Rule.Filter> filter = Optional.empty();
        if (r.has("filter")) {
            JsonNode f = r.get("filter");
            String field = field(f, "field", where + " filter", problems, true);
            Set<String> in = new LinkedHashSet<>();
            if (f.get("in") == null || !f.get("in").isArray() || f.get("in").isEmpty()) {
                problems.add(where + ": filter needs a non-empty 'in' list");
            } else {
                f.get("in").forEach(v -> in.add(v.asText()));
            }
            filter = Optional.of(new Rule.Filter(field, Set.copyOf(in)));
        }
        Rule.Value value = enumValue(Rule.Value.class, text(r, "value", where, problems), where + " value", problems);
        Set<Rule.Aggregation> aggs = EnumSet.noneOf(Rule.Aggregation.class);
        list(r, "aggregations", where, problems).forEach(a -> {
            Rule.Aggregation x = enumValue(Rule.Aggregation.class, a, where + " aggregation", problems);
            if (x != null) aggs.add(x);
        });
        List<TimeUnit> units = new ArrayList<>();
        list(r, "units", where, problems).forEach(u -> {
            TimeUnit x = enumValue(TimeUnit.class, u, where + " unit", problems);
            if (x != null && !units.contains(x)) units.add(x);
        });
        Duration retention = null;
        String ret = text(r, "retention", where, problems);
        if (ret != null) {
            try {
                retention = Duration.parse(ret);
                if (retention.isNegative() || retention.isZero()) problems.add(where + ": retention must be positive");
            } catch (DateTimeParseException e) {
                problems.add(where + ": retention '" + ret + "' is not an ISO-8601 duration like P35D or PT48H");
            }
        }
        return new Rule(name, entity, qualifier, filter, value, Set.copyOf(aggs), List.copyOf(units), retention);
    }

    private static String text(JsonNode r, String key, String where, List<String> problems) {
        JsonNode n = r.get(key);
        if (n == null || n.isNull() || n.asText().isBlank()) {
            problems.add(where + ": '" + key + "' is required");
            return null;
        }
        return n.asText();
    }

    private static String field(JsonNode r, String key, String where, List<String> problems, boolean required) {
        if (!required && (r.get(key) == null || r.get(key).isNull())) return null;
        String f = text(r, key, where, problems);
        if (f != null && !EventFields.isKnown(f)) problems.add(where + ": " + key + " '" + f + "' is not an event field");
        return f;
    }

    private static List<String> list(JsonNode r, String key, String where, List<String> problems) {
        JsonNode n = r.get(key);
        if (n == null || !n.isArray() || n.isEmpty()) {
            problems.add(where + ": '" + key + "' needs a non-empty list");
            return List.of();
        }
        List<String> out = new ArrayList<>();
        n.forEach(v -> out.add(v.asText()));
        return out;
    }

    private static <E extends Enum<E>> E enumValue(Class<E> type, String raw, String where, List<String> problems) {
        if (raw == null) return null;
        try {
            return Enum.valueOf(type, raw.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            problems.add(where + ": '" + raw + "' is not one of " + EnumSet.allOf(type).toString().toLowerCase(Locale.ROOT));
            return null;
        }
    }
}
