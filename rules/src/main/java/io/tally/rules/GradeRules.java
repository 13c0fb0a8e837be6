package io.tally.rules;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.tally.model.TimeUnit;
import io.tally.rules.source.FieldPath;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The grade rules of a run, loaded from YAML or JSON and validated as a whole: every problem in the
 * file is reported at once, each naming the rule and the field, so a bad rule file stops the start
 * with one readable message instead of failing on the first event. ingest-app aggregates by these rules
 * and read-service accepts their grades and units, both through this class, so a file one accepts the
 * other accepts too. (loadgen reads the same file with its own code, on purpose: its ground truth must not
 * share code with what it checks.)
 */
public final class GradeRules {
    /**
     * Where the default rules are found: the copy of rules/default-rules.yaml this module's jar carries, so an
     * application finds them whatever its working directory. The default of every rules-file setting.
     */
    public static final String BUILTIN_DEFAULT = "builtin:default-rules.yaml";
    private static final String BUILTIN = "builtin:";

    /** Rule names become part of document ids and API parameters: short, lower case, no separators. */
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");
    private static final Set<String> RULE_KEYS =
            Set.of("name", "entity", "qualifier", "filter", "value", "aggregations", "units", "retention");

    private final List<GradeRule> rules;
    private final Map<String, GradeRule> byName;

    private GradeRules(List<GradeRule> rules) {
        this.rules = List.copyOf(rules);
        this.byName = rules.stream().collect(Collectors.toUnmodifiableMap(GradeRule::name, r -> r));
    }

    /** The rules in file order. */
    public List<GradeRule> rules() {
        return rules;
    }

    /** The rule of this name. */
    public Optional<GradeRule> rule(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** Every unit some rule keeps buckets in. */
    public Set<TimeUnit> units() {
        Set<TimeUnit> units = EnumSet.noneOf(TimeUnit.class);
        rules.forEach(r -> units.addAll(r.units()));
        return Collections.unmodifiableSet(units);
    }

    /** The longest retention of any rule: events older than this count for no grade at all. */
    public Duration longestRetention() {
        return rules.stream().map(GradeRule::retention).max(Duration::compareTo).orElse(Duration.ZERO);
    }

    /** Loads {@code location}: a file path, or {@link #BUILTIN_DEFAULT}. */
    public static GradeRules load(String location) {
        return parse(text(location), location);
    }

    /** The text of the rules file at {@code location} (a path, or {@link #BUILTIN_DEFAULT}), unparsed. */
    public static String text(String location) {
        try {
            if (location.startsWith(BUILTIN)) {
                String resource = location.substring(BUILTIN.length());
                try (InputStream in = GradeRules.class.getResourceAsStream(resource)) {
                    if (in == null) throw new RulesException(List.of("no built-in rule set named " + resource));
                    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
            }
            return Files.readString(Path.of(location));
        } catch (IOException e) {
            throw new RulesException(List.of("cannot read rules file " + location + ": " + e.getMessage()));
        }
    }

    /** Parses YAML (JSON is YAML too) and validates every rule. */
    public static GradeRules parse(String text, String origin) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(text);
        } catch (IOException e) {
            throw new RulesException(List.of(origin + ": not valid YAML/JSON: " + e.getMessage()));
        }
        List<String> problems = new ArrayList<>();
        JsonNode list = root == null ? null : root.get("rules");
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw new RulesException(List.of(origin + ": expected a non-empty list under 'rules'"));
        }
        List<GradeRule> rules = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode r = list.get(i);
            String where = origin + " rule #" + (i + 1) + (r.hasNonNull("name") ? " (" + r.get("name").asText() + ")" : "");
            int before = problems.size();
            GradeRule rule = rule(r, where, problems);
            if (rule != null && !names.add(rule.name())) problems.add(where + ": duplicate name '" + rule.name() + "'");
            if (problems.size() == before && rule != null) rules.add(rule);
        }
        if (!problems.isEmpty()) throw new RulesException(problems);
        return new GradeRules(rules);
    }

    private static GradeRule rule(JsonNode r, String where, List<String> problems) {
        if (!r.isObject()) {
            problems.add(where + ": expected a mapping");
            return null;
        }
        for (Iterator<String> it = r.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!RULE_KEYS.contains(key)) problems.add(where + ": unknown field '" + key + "' (expected one of " + RULE_KEYS + ")");
        }
        String name = text(r, "name");
        if (name == null || !NAME.matcher(name).matches()) {
            problems.add(where + ": name must match " + NAME.pattern() + " (it becomes part of document ids)");
        }
        String entity = text(r, "entity");
        if (entity == null) problems.add(where + ": entity is required (an event field such as customerId)");
        else checkStringField(entity, "entity", where, problems);
        String qualifier = text(r, "qualifier");
        if (qualifier != null) checkStringField(qualifier, "qualifier", where, problems);

        Optional<GradeRule.Filter> filter = Optional.empty();
        if (r.hasNonNull("filter")) {
            JsonNode f = r.get("filter");
            String field = text(f, "field");
            JsonNode in = f.get("in");
            if (field == null || in == null || !in.isArray() || in.isEmpty()) {
                problems.add(where + ": filter needs 'field' and a non-empty list 'in'");
            } else {
                checkStringField(field, "filter.field", where, problems);
                Set<String> values = new LinkedHashSet<>();
                in.forEach(v -> values.add(v.asText()));
                filter = Optional.of(new GradeRule.Filter(field, values));
            }
        }

        GradeRule.ValueSource value = null;
        String v = text(r, "value");
        if (v == null) problems.add(where + ": value is required: amount or one");
        else {
            try {
                value = GradeRule.ValueSource.valueOf(v.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                problems.add(where + ": value '" + v + "' is not amount or one");
            }
        }

        Set<GradeRule.Aggregation> aggregations = EnumSet.noneOf(GradeRule.Aggregation.class);
        for (String a : list(r, "aggregations", where, problems)) {
            try {
                aggregations.add(GradeRule.Aggregation.valueOf(a.toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                problems.add(where + ": aggregation '" + a + "' is not one of sum, count, min, max");
            }
        }
        if (value == GradeRule.ValueSource.ONE
                && (aggregations.contains(GradeRule.Aggregation.MIN) || aggregations.contains(GradeRule.Aggregation.MAX))) {
            problems.add(where + ": min and max of 'one' are always 1; use count");
        }

        List<TimeUnit> units = new ArrayList<>();
        for (String u : list(r, "units", where, problems)) {
            try {
                TimeUnit unit = TimeUnit.fromCode(u);
                if (units.contains(unit)) problems.add(where + ": unit '" + u + "' listed twice");
                else units.add(unit);
            } catch (IllegalArgumentException e) {
                problems.add(where + ": " + e.getMessage());
            }
        }

        Duration retention = null;
        String ret = text(r, "retention");
        if (ret == null) problems.add(where + ": retention is required (ISO-8601 duration such as P35D)");
        else {
            try {
                retention = Duration.parse(ret);
                if (retention.isNegative() || retention.isZero()) problems.add(where + ": retention must be positive");
            } catch (DateTimeParseException e) {
                problems.add(where + ": retention '" + ret + "' is not an ISO-8601 duration such as P35D or PT48H");
            }
        }
        if (name == null || entity == null || value == null || retention == null) return null;
        return new GradeRule(name, entity, Optional.ofNullable(qualifier), filter, value, aggregations, units, retention);
    }

    /**
     * Rule fields name event values by the names a source mapping gives them, or by path ({@link FieldPath}). Only the
     * syntax is checked here: whether the path exists, and holds a key-like value, depends on each source's writer
     * schema and is checked against the registry ({@link io.tally.rules.source.SourcePlan}).
     */
    private static void checkStringField(String field, String what, String where, List<String> problems) {
        try {
            FieldPath.parse(field);
        } catch (IllegalArgumentException e) {
            problems.add(where + ": " + what + ": " + e.getMessage());
        }
    }

    private static String text(JsonNode node, String key) {
        JsonNode v = node.get(key);
        return v == null || v.isNull() || v.asText().isBlank() ? null : v.asText().trim();
    }

    private static List<String> list(JsonNode r, String key, String where, List<String> problems) {
        JsonNode v = r.get(key);
        if (v == null || !v.isArray() || v.isEmpty()) {
            problems.add(where + ": " + key + " must be a non-empty list");
            return List.of();
        }
        List<String> out = new ArrayList<>();
        v.forEach(x -> out.add(x.asText()));
        return out;
    }
}
