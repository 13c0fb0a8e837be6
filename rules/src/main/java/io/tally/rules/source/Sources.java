package io.tally.rules.source;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.tally.rules.RulesException;
import io.tally.schemas.serde.SubjectNameStrategy;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The event sources of a run, loaded from YAML or JSON and validated as a whole, every problem at once, each naming
 * the source and the key (like {@link io.tally.rules.GradeRules}). Only the file's shape is checked here; whether
 * each path exists with the right type depends on the writer schema, and is checked against the registry at start
 * and for every new schema id ({@link SourcePlan}).
 */
public final class Sources {
    /** The shipped mapping: Tally's own TransactionEvent on the topic {@code transactions} (rules/default-sources.yaml). */
    public static final String BUILTIN_DEFAULT = "builtin:default-sources.yaml";
    private static final String BUILTIN = "builtin:";
    private static final String INVALID = "Invalid sources";

    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");
    private static final Set<String> KEYS = Set.of("name", "topics", "topic-pattern", "subject-name-strategy", "record-name",
            "transaction-id", "event-time", "domain", "domain-constant", "amount", "currency", "required", "fields");
    private static final Set<String> AMOUNT_KEYS = Set.of("path", "scale", "double");

    private final List<SourceMapping> sources;

    private Sources(List<SourceMapping> sources) {
        this.sources = List.copyOf(sources);
    }

    /** The sources in file order. */
    public List<SourceMapping> sources() {
        return sources;
    }

    /**
     * The source reading {@code topic} (named within the deployment), the first in file order when patterns overlap;
     * empty when none does.
     */
    public Optional<SourceMapping> sourceOf(String topic) {
        return sources.stream().filter(s -> s.reads(topic)).findFirst();
    }

    /** Every topic named outright (not by pattern), in file order. */
    public List<String> namedTopics() {
        return sources.stream().flatMap(s -> s.topics().stream()).distinct().toList();
    }

    /** Loads {@code location}: a file path, or {@link #BUILTIN_DEFAULT}. */
    public static Sources load(String location) {
        try {
            if (location.startsWith(BUILTIN)) {
                String resource = "/io/tally/rules/" + location.substring(BUILTIN.length());
                try (InputStream in = Sources.class.getResourceAsStream(resource)) {
                    if (in == null) throw new RulesException(INVALID, List.of("no built-in sources file named " + location));
                    return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), location);
                }
            }
            return parse(Files.readString(Path.of(location)), location);
        } catch (IOException e) {
            throw new RulesException(INVALID, List.of("cannot read sources file " + location + ": " + e.getMessage()));
        }
    }

    public static Sources parse(String text, String origin) {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(text);
        } catch (IOException e) {
            throw new RulesException(INVALID, List.of(origin + ": not valid YAML/JSON: " + e.getMessage()));
        }
        JsonNode list = root == null ? null : root.get("sources");
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw new RulesException(INVALID, List.of(origin + ": expected a non-empty list under 'sources'"));
        }
        List<String> problems = new ArrayList<>();
        List<SourceMapping> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        Map<String, String> topicOwners = new HashMap<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode s = list.get(i);
            String where = origin + " source #" + (i + 1) + (s.hasNonNull("name") ? " (" + s.get("name").asText() + ")" : "");
            int before = problems.size();
            SourceMapping m = new Reader(s, where, problems).mapping();
            if (m == null) continue;
            if (!names.add(m.name())) problems.add(where + ": duplicate name '" + m.name() + "'");
            for (String t : m.topics()) {
                String owner = topicOwners.putIfAbsent(t, m.name());
                if (owner != null && !owner.equals(m.name())) {
                    problems.add(where + ": topic '" + t + "' is read by source '" + owner + "' already; a topic belongs to one source");
                }
            }
            if (problems.size() == before) out.add(m);
        }
        if (!problems.isEmpty()) throw new RulesException(INVALID, problems);
        return new Sources(out);
    }

    /** Reads one source entry, adding every problem it finds. */
    private record Reader(JsonNode s, String where, List<String> problems) {
        SourceMapping mapping() {
            int before = problems.size();
            if (!s.isObject()) {
                problems.add(where + ": expected a mapping");
                return null;
            }
            for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
                String key = it.next();
                if (!KEYS.contains(key)) problems.add(where + ": unknown key '" + key + "' (expected one of " + KEYS + ")");
            }
            String name = text("name");
            if (name == null || !NAME.matcher(name).matches()) {
                problems.add(where + ": name must match " + NAME.pattern() + " (it scopes the dedupe of transaction ids)");
            }
            List<String> topics = new ArrayList<>();
            JsonNode t = s.get("topics");
            if (t != null && !t.isNull()) {
                if (!t.isArray() || t.isEmpty()) problems.add(where + ": topics must be a non-empty list of topic names");
                else t.forEach(x -> {
                    if (x.asText().isBlank()) problems.add(where + ": a topic name is empty");
                    else topics.add(x.asText().strip());
                });
            }
            Optional<Pattern> pattern = Optional.empty();
            String p = text("topic-pattern");
            if (p != null) {
                try {
                    pattern = Optional.of(Pattern.compile(p));
                } catch (PatternSyntaxException e) {
                    problems.add(where + ": topic-pattern '" + p + "' is not a regular expression: " + e.getDescription());
                }
            }
            if (topics.isEmpty() == (p == null)) problems.add(where + ": give either topics (a list) or topic-pattern (a regular expression)");

            SubjectNameStrategy strategy = SubjectNameStrategy.TOPIC_NAME;
            String st = text("subject-name-strategy");
            if (st != null) {
                try {
                    strategy = SubjectNameStrategy.parse(st);
                } catch (IllegalArgumentException e) {
                    problems.add(where + ": subject-name-strategy " + e.getMessage());
                }
            }
            Optional<String> recordName = Optional.ofNullable(text("record-name"));
            if (strategy.usesRecordName() && recordName.isEmpty()) {
                problems.add(where + ": subject-name-strategy " + strategy.shortName()
                        + " needs record-name, the full name of the event record (for example com.shop.OrderPlaced)");
            }

            FieldPath txId = path("transaction-id", true);
            FieldPath time = path("event-time", true);
            FieldPath domain = path("domain", false);
            String domainConstant = text("domain-constant");
            if ((domain == null) == (domainConstant == null)) {
                problems.add(where + ": give either domain (a field path) or domain-constant (one domain for every event)");
            } else if (domainConstant != null && domainConstant.indexOf('|') >= 0) {
                problems.add(where + ": domain-constant contains '|', the partition-key separator");
            }
            Optional<SourceMapping.Amount> amount = amount();
            FieldPath currency = path("currency", false);

            List<String> required = new ArrayList<>();
            JsonNode r = s.get("required");
            if (r != null && !r.isNull()) {
                if (!r.isArray()) problems.add(where + ": required must be a list of field names or paths");
                else r.forEach(x -> {
                    if (checkPath(x.asText(), "required")) required.add(x.asText().strip());
                });
            }
            Map<String, Optional<FieldPath>> fields = new LinkedHashMap<>();
            JsonNode f = s.get("fields");
            if (f != null && !f.isNull()) {
                if (!f.isObject()) problems.add(where + ": fields must map names rules use to paths in this source's events");
                else f.fields().forEachRemaining(e -> {
                    if (e.getValue().isNull()) fields.put(e.getKey(), Optional.empty());
                    else if (checkPath(e.getValue().asText(), "fields." + e.getKey())) {
                        fields.put(e.getKey(), Optional.of(FieldPath.parse(e.getValue().asText().strip())));
                    }
                });
            }
            if (problems.size() > before) return null; // name, transaction id and event time among them when missing
            return new SourceMapping(name, topics, pattern, strategy, recordName, txId, time, Optional.ofNullable(domain),
                    Optional.ofNullable(domainConstant), amount, Optional.ofNullable(currency), required, fields);
        }

        /** {@code amount: path}, {@code amount: {path, scale, double: allow}}, or {@code amount: ~} (none). */
        private Optional<SourceMapping.Amount> amount() {
            if (!s.has("amount")) {
                problems.add(where + ": amount is required: a path (amount: total), {path: payment.amountCents, scale: 2}, "
                        + "or ~ when this source carries no amount");
                return Optional.empty();
            }
            JsonNode a = s.get("amount");
            if (a.isNull()) return Optional.empty();
            if (a.isTextual()) {
                return checkPath(a.asText(), "amount") ? Optional.of(new SourceMapping.Amount(FieldPath.parse(a.asText().strip()), null, false)) : Optional.empty();
            }
            if (!a.isObject()) {
                problems.add(where + ": amount must be a path or a mapping {path, scale, double}");
                return Optional.empty();
            }
            for (Iterator<String> it = a.fieldNames(); it.hasNext(); ) {
                String key = it.next();
                if (!AMOUNT_KEYS.contains(key)) problems.add(where + ": unknown key 'amount." + key + "' (expected one of " + AMOUNT_KEYS + ")");
            }
            String path = a.hasNonNull("path") ? a.get("path").asText() : null;
            if (path == null) {
                problems.add(where + ": amount.path is required");
                return Optional.empty();
            }
            Integer scale = null;
            if (a.has("scale")) {
                // canConvertToInt alone lets 2.5 through as 2.
                if (!a.get("scale").isIntegralNumber() || !a.get("scale").canConvertToInt() || a.get("scale").asInt() < 0
                        || a.get("scale").asInt() > 18) {
                    problems.add(where + ": amount.scale must be a whole number from 0 to 18 (2 for cents)");
                } else scale = a.get("scale").asInt();
            }
            boolean allowDouble = false;
            if (a.has("double")) {
                String d = a.get("double").asText();
                if (d.equals("allow")) allowDouble = true;
                else if (!d.equals("refuse")) problems.add(where + ": amount.double must be allow or refuse (the default)");
            }
            if (!checkPath(path, "amount.path")) return Optional.empty();
            return Optional.of(new SourceMapping.Amount(FieldPath.parse(path.strip()), scale, allowDouble));
        }

        private FieldPath path(String key, boolean required) {
            String v = text(key);
            if (v == null) {
                if (required) problems.add(where + ": " + key + " is required (a field path in the event)");
                return null;
            }
            return checkPath(v, key) ? FieldPath.parse(v) : null;
        }

        private boolean checkPath(String text, String key) {
            return attempt(FieldPath::parse, text, key) != null;
        }

        private <T> T attempt(Function<String, T> f, String text, String key) {
            try {
                return f.apply(text == null ? null : text.strip());
            } catch (IllegalArgumentException e) {
                problems.add(where + ": " + key + ": " + e.getMessage());
                return null;
            }
        }

        private String text(String key) {
            JsonNode v = s.get(key);
            return v == null || v.isNull() || v.asText().isBlank() ? null : v.asText().strip();
        }
    }
}
