package io.tally.read;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.model.BucketId;
import io.tally.model.GradeId;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRule;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Parses and validates the input of every route into typed requests; every problem is a
 * {@link Problem#badRequest} naming the parameter (never echoing long input back). Grades and units are checked
 * against the rules snapshot the request is answered with ({@link RulesView}). Pure and thread-safe: no I/O, time from
 * the given clock.
 */
final class Requests {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern CONTROL = Pattern.compile("\\p{Cntrl}");
    private static final int MAX_TOKEN_LENGTH = 4096;

    private final ReadSettings.Api limits;
    private final Clock clock;

    Requests(ReadSettings.Api limits, Clock clock) {
        this.limits = limits;
        this.clock = clock;
    }

    /** {@code GET /v1/buckets/{pk}/{id}}, and how to read its grade. */
    record Point(String pk, String id, GradeStatus status) {}

    /**
     * The buckets of one grade id and unit whose start lies in [{@code first}, {@code end}) (bucket
     * indexes), as ISO strings as stored in the documents' {@code bucket} field.
     */
    record Range(String pk, GradeRule grade, String gradeId, TimeUnit unit, long first, long end, GradeStatus status) {
        String fromIso() { return unit.bucketStart(first).toString(); }
        String toIso() { return unit.bucketStart(end).toString(); }
        long buckets() { return end - first; }
        /** An unqualified minute grade: nested in its hours or in minute documents ({@link BucketStore}). */
        boolean nestedMinutes() { return unit == TimeUnit.MINUTE && !grade.qualified(); }
        /** The same grade's buckets from {@code from} on. */
        Range from(long from) { return new Range(pk, grade, gradeId, unit, from, end, status); }
        /** Whether any bucket of the range may lack history: the first is the earliest, so it says for all. */
        boolean incomplete() { return status.incomplete(unit.bucketStart(first)); }
    }

    /**
     * A range query page: the range, the page size and where to resume: the Cosmos continuation, or for
     * {@link Range#nestedMinutes} the next minute bucket ({@link BucketStore#nextMinute}).
     */
    record RangePage(Range range, int limit, Optional<String> continuation) {}

    /** The current bucket of every grade and unit of one entity, at {@code at}. */
    record Features(String pk, Instant at) {}

    /**
     * The id is the API's per-grade id, not a Cosmos id: its grade may hold any character of a qualifier value
     * ({@code /}, {@code |}, {@code :} included), and only the entity bucket's id ({@code unit|bucketIndex}, from the
     * right end) reaches Cosmos, so no character needs refusing beyond the limits of {@link #checkKey}. Without a
     * rules record any grade is looked up (a grade the rules do not know is simply not found); with one, a grade the
     * record does not count is unknown, as in a range.
     */
    Point point(RulesView rules, String rawPk, String rawId) {
        String pk = partitionKey(rawPk);
        String id = decode("id", rawId);
        checkKey("id", id);
        BucketId bucket;
        try {
            bucket = BucketId.parse(id);
        } catch (IllegalArgumentException e) {
            throw Problem.badRequest(e.getMessage());
        }
        return new Point(pk, id, status(rules, GradeId.parse(bucket.grade()).rule(), bucket.unit()));
    }

    /** {@code GET /v1/buckets/{pk}?grade&unit&from&to[&qualifier][&limit][&continuation]}. */
    RangePage rangePage(RulesView rules, String rawPk, String target) {
        Map<String, List<String>> p = parameters(target);
        allowOnly(p, Set.of("grade", "qualifier", "unit", "from", "to", "limit", "continuation"));
        Range range = range(rules, rawPk, p, false);
        int limit = optional(p, "limit").map(v -> intIn("limit", v, 1, limits.maxRangeBuckets())).orElse(limits.maxRangeBuckets());
        Optional<String> continuation = optional(p, "continuation").map(t -> continuation(t, range));
        return new RangePage(range, limit, continuation);
    }

    /** {@code GET /v1/rollups/{pk}?grade&unit&(last | from[&to])[&qualifier]}. */
    Range rollup(RulesView rules, String rawPk, String target) {
        Map<String, List<String>> p = parameters(target);
        allowOnly(p, Set.of("grade", "qualifier", "unit", "from", "to", "last"));
        return range(rules, rawPk, p, true);
    }

    /** {@code GET /v1/rules}: takes no parameters. */
    void rules(String target) {
        allowOnly(parameters(target), Set.of());
    }

    /** {@code GET /v1/features/{pk}[?at]}. */
    Features features(String rawPk, String target) {
        Map<String, List<String>> p = parameters(target);
        allowOnly(p, Set.of("at"));
        String pk = partitionKey(rawPk);
        Instant at = optional(p, "at").map(v -> instant("at", v)).orElseGet(clock::instant);
        return new Features(pk, at);
    }

    private Range range(RulesView rules, String rawPk, Map<String, List<String>> p, boolean allowLast) {
        String pk = partitionKey(rawPk);
        String gradeParam = required(p, "grade");
        checkKey("grade", gradeParam);
        Optional<String> qualifier = optional(p, "qualifier");
        GradeId gradeId = GradeId.parse(gradeParam);
        if (gradeId.qualifier().isPresent()) { // grade given as its id, name:qualifier
            if (qualifier.isPresent()) throw Problem.badRequest("give the qualifier either in grade (name:value) or as qualifier, not both");
            qualifier = gradeId.qualifier();
        }
        String name = gradeId.rule();
        GradeRule grade = rules.rules().rule(name).orElseThrow(() -> unknownGrade(name));
        if (grade.qualified() && qualifier.isEmpty()) {
            throw Problem.badRequest("grade " + name + " is kept per qualifier value: add qualifier=<value> (e.g. a SKU)");
        }
        if (!grade.qualified() && qualifier.isPresent()) throw Problem.badRequest("grade " + name + " has no qualifier");
        // A qualifier value is event data: it reaches Cosmos only as a query parameter or a JSON property name.
        qualifier.ifPresent(q -> {
            checkKey("qualifier", q);
            if (q.isEmpty()) throw Problem.badRequest("qualifier must not be empty");
        });
        TimeUnit unit = unit(required(p, "unit"));
        if (!grade.units().contains(unit)) {
            throw Problem.badRequest("grade " + name + " is not kept in unit " + unit.code() + " (units: "
                    + String.join(", ", grade.units().stream().map(TimeUnit::code).toList()) + ")");
        }
        GradeStatus status = status(rules, name, unit);

        long first;
        long end;
        Optional<String> last = allowLast ? optional(p, "last") : Optional.empty();
        if (last.isPresent()) {
            if (p.containsKey("from") || p.containsKey("to")) throw Problem.badRequest("give either last or from/to, not both");
            int n = intIn("last", last.get(), 1, limits.maxRangeBuckets());
            end = unit.bucketIndex(clock.instant()) + 1; // the current, still open bucket counts
            first = end - n;
        } else {
            if (!p.containsKey("from")) {
                throw Problem.badRequest(allowLast ? "give last=<units> or from=<ISO-8601 instant>" : "from is required (ISO-8601 instant)");
            }
            Instant from = instant("from", required(p, "from"));
            Instant to = optional(p, "to").map(v -> instant("to", v)).orElseGet(clock::instant);
            if (!from.isBefore(to)) throw Problem.badRequest("from must be before to");
            first = unit.bucketIndex(from);
            long toIndex = unit.bucketIndex(to);
            end = unit.bucketStart(toIndex).equals(to) ? toIndex : toIndex + 1; // to is exclusive
            if (end - first > limits.maxRangeBuckets()) {
                throw Problem.badRequest("the range spans " + (end - first) + " " + unit.code() + " buckets; at most "
                        + limits.maxRangeBuckets() + " are allowed");
            }
        }
        return new Range(pk, grade, grade.gradeId(qualifier.orElse(null)), unit, first, end, status);
    }

    /** How to read {@code rule} in {@code unit}; a grade the rules record does not count is unknown. */
    private static GradeStatus status(RulesView rules, String rule, TimeUnit unit) {
        return rules.status(rule, unit).orElseThrow(() -> rules.rules().rule(rule).isPresent()
                ? Problem.badRequest("grade " + rule + " is not kept in unit " + unit.code())
                : unknownGrade(rule));
    }

    private static Problem unknownGrade(String rule) {
        return Problem.badRequest("unknown grade '" + shorten(rule) + "'");
    }

    // --- pagination tokens: base64url of {"q": fingerprint of the query, "c": Cosmos continuation or next minute} ---

    /** The token handed to the client for the next page of {@code range}. */
    static String token(Range range, String continuation) {
        ObjectNode t = JSON.createObjectNode().put("q", fingerprint(range)).put("c", continuation);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(t.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static String continuation(String token, Range range) {
        if (token.length() > MAX_TOKEN_LENGTH) throw Problem.badRequest("continuation is too long");
        JsonNode t;
        try {
            t = JSON.readTree(Base64.getUrlDecoder().decode(token));
        } catch (Exception e) { // IllegalArgumentException (base64) or IOException (JSON)
            throw Problem.badRequest("continuation is not a token this API issued");
        }
        if (t == null || !t.path("c").isTextual() || !t.path("q").isTextual()) {
            throw Problem.badRequest("continuation is not a token this API issued");
        }
        if (!t.get("q").asText().equals(fingerprint(range))) {
            throw Problem.badRequest("continuation belongs to a different query (pk, grade, unit, from and to must stay the same)");
        }
        String c = t.get("c").asText();
        if (range.nestedMinutes()) {
            OptionalLong next = BucketStore.nextMinute(c);
            if (next.isEmpty() || next.getAsLong() < range.first() || next.getAsLong() >= range.end()) {
                throw Problem.badRequest("continuation is not a token this API issued");
            }
        }
        return c;
    }

    private static String fingerprint(Range r) {
        String q = r.pk() + '\n' + r.gradeId() + '\n' + r.unit().code() + '\n' + r.first() + '\n' + r.end();
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(q.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // --- single values ---

    private String partitionKey(String raw) {
        String pk = decode("pk", raw);
        checkKey("pk", pk);
        int bar = pk.indexOf('|');
        if (bar <= 0 || bar == pk.length() - 1) throw Problem.badRequest("pk must look like {domain}|{entityKey}");
        return pk;
    }

    /** Length is in UTF-8 bytes, as ingest-app bounds the keys it stores and Cosmos bounds a partition key. */
    private void checkKey(String name, String value) {
        if (utf8Length(value) > limits.maxKeyLength()) {
            throw Problem.badRequest(name + " is longer than " + limits.maxKeyLength() + " bytes (UTF-8)");
        }
        if (CONTROL.matcher(value).find()) throw Problem.badRequest(name + " must not contain control characters");
    }

    private static int utf8Length(String s) {
        int bytes = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) bytes += 1;
            else if (c < 0x800) bytes += 2;
            else if (Character.isHighSurrogate(c)) { bytes += 4; i++; } // decoded input holds no lone surrogates
            else bytes += 3;
        }
        return bytes;
    }

    /** A path variable as Reactor Netty hands it out: the raw segment, decoded only now (RFC 3986, {@code +} is a plus). */
    private static String decode(String name, String raw) {
        if (raw == null || raw.isEmpty()) throw Problem.badRequest(name + " is required");
        try {
            return PercentDecoder.pathSegment(raw);
        } catch (IllegalArgumentException e) {
            throw Problem.badRequest(name + " is not correctly URL-encoded (percent-encoded UTF-8)");
        }
    }

    private static TimeUnit unit(String code) {
        try {
            return TimeUnit.fromCode(code);
        } catch (IllegalArgumentException e) {
            throw Problem.badRequest("unknown unit '" + shorten(code) + "' (minute, hour, day or month)");
        }
    }

    private static Instant instant(String name, String v) {
        try {
            return Instant.parse(v);
        } catch (DateTimeParseException e) {
            throw Problem.badRequest(name + " must be an ISO-8601 instant such as 2026-11-21T10:00:00Z");
        }
    }

    private static int intIn(String name, String v, int min, int max) {
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) return n;
        } catch (NumberFormatException e) {
            // falls through to the same answer as out of range
        }
        throw Problem.badRequest(name + " must be a whole number from " + min + " to " + max);
    }

    /**
     * The decoded query parameters of the request target; a malformed escape ({@code %zz}, a lone {@code %}) or bytes
     * that are not UTF-8 are the client's error, not ours.
     */
    private static Map<String, List<String>> parameters(String target) {
        try {
            return PercentDecoder.query(target);
        } catch (IllegalArgumentException e) {
            throw Problem.badRequest("the query string is not correctly URL-encoded (percent-encoded UTF-8)");
        }
    }

    private static void allowOnly(Map<String, List<String>> p, Set<String> allowed) {
        for (Map.Entry<String, List<String>> e : p.entrySet()) {
            if (!allowed.contains(e.getKey())) {
                throw Problem.badRequest("unknown parameter '" + shorten(e.getKey()) + "' (allowed: "
                        + (allowed.isEmpty() ? "none" : String.join(", ", allowed.stream().sorted().toList())) + ")");
            }
            if (e.getValue().size() > 1) throw Problem.badRequest("parameter " + e.getKey() + " is given more than once");
        }
    }

    private static String required(Map<String, List<String>> p, String name) {
        return optional(p, name).orElseThrow(() -> Problem.badRequest(name + " is required"));
    }

    private static Optional<String> optional(Map<String, List<String>> p, String name) {
        List<String> v = p.get(name);
        return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v.get(0));
    }

    /** Input quoted back in a message is cut short and stripped of control characters. */
    private static String shorten(String s) {
        String clean = CONTROL.matcher(s).replaceAll("?");
        return clean.length() <= 40 ? clean : clean.substring(0, 40) + "...";
    }
}
