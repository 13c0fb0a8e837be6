package io.tally.rules.state;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.rules.GradeVersion;
import io.tally.rules.RulesPlan;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a deployment counts, and since when: the rules file it applied last (its text, so every reader counts and
 * answers the same rules), the version of each grade, the generation that started counting it and the event time its
 * live counting starts at, and the grades it retired. One document in the bucket container ({@link RulesStateStore}),
 * written by {@code ./tally rules apply} and read by ingest-app, replay and read-service (docs/DESIGN.md, "Rules that
 * change").
 *
 * <p>The generation grows by one per applied change. A document records the generation it was last written under in
 * its {@code ver} ({@link #verFloor}), which is how a reader tells values of a grade's old version (or of a removed
 * grade) from those of the grade counted now without a field per grade.
 */
public record RulesState(long generation, Instant appliedAt, String rulesOrigin, String rulesText, List<Grade> grades,
                         List<Retired> retired) {

    /** The partition key and id of the record in the bucket container: no entity bucket has an id without {@code |}. */
    public static final String PK = "_tally";
    public static final String ID = "rules";

    /**
     * {@code ver} of a document written under generation {@code g} is {@code g << VER_GENERATION_SHIFT} plus its grade
     * updates: 2^40 updates per document and generation, 2^12 generations before {@code ver} leaves the integers a
     * double holds exactly (Cosmos keeps numbers as doubles, and the write guard compares {@code ver} there).
     */
    public static final int VER_GENERATION_SHIFT = 40;
    public static final long MAX_GENERATION = (1L << (53 - VER_GENERATION_SHIFT)) - 1;

    /** Whether history still has to be counted into a grade's buckets before {@link Grade#countingFrom}. */
    public enum Backfill {
        /** Counted since the deployment's first generation: nothing before it to fill. */
        NONE,
        /** Added or changed by a later generation: buckets before {@code countingFrom} lack history until filled. */
        PENDING,
        /** History up to {@code countingFrom} has been counted in. */
        COMPLETE;

        /** How the record and the API spell it: {@code none}, {@code pending}, {@code complete}. */
        public String word() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        static Backfill of(String word) {
            return valueOf(word.toUpperCase(java.util.Locale.ROOT));
        }
    }

    /**
     * A grade counted now. {@code since}: the generation that started counting this version; a document written under
     * an older generation holds no value of it (an older version's, or none). {@code countingFrom}: the live run counts
     * events at or after this event time; null when counted from the start.
     */
    public record Grade(String rule, TimeUnit unit, String version, long since, Instant countingFrom, Backfill backfill) {
        public Grade {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(unit, "unit");
            Objects.requireNonNull(version, "version");
            Objects.requireNonNull(backfill, "backfill");
        }

        public String grade() {
            return rule + "/" + unit.code();
        }

        /** Whether every bucket of this grade holds all its events (history filled, or none to fill). */
        public boolean complete() {
            return backfill != Backfill.PENDING;
        }

        /**
         * Whether a bucket starting at {@code bucketStart} may lack events: history is still being filled, and the
         * bucket begins before live counting did.
         */
        public boolean incomplete(Instant bucketStart) {
            return !complete() && countingFrom != null && bucketStart.isBefore(countingFrom);
        }
    }

    /** A grade version no longer counted: removed from the rules, or replaced by a new version ({@code changed}). */
    public record Retired(String rule, TimeUnit unit, String version, long generation, boolean changed) {}

    public RulesState {
        Objects.requireNonNull(appliedAt, "appliedAt");
        Objects.requireNonNull(rulesText, "rulesText");
        grades = List.copyOf(grades);
        retired = List.copyOf(retired);
        if (generation < 0 || generation > MAX_GENERATION) {
            throw new IllegalArgumentException("generation " + generation + " outside 0.." + MAX_GENERATION);
        }
    }

    /** The first record of a deployment: generation 0, every grade counted from the start. */
    public static RulesState first(List<GradeVersion> grades, String origin, String text, Instant now) {
        List<Grade> out = grades.stream().map(g -> new Grade(g.rule(), g.unit(), g.version(), 0, null, Backfill.NONE)).toList();
        return new RulesState(0, now, origin, text, out, List.of());
    }

    /** The rules this record applied. */
    public GradeRules rules() {
        return GradeRules.parse(rulesText, "the applied rules (generation " + generation + ", from " + rulesOrigin + ")");
    }

    public List<GradeVersion> versions() {
        return grades.stream().map(g -> new GradeVersion(g.rule(), g.unit(), g.version())).toList();
    }

    public Optional<Grade> grade(String rule, TimeUnit unit) {
        for (Grade g : grades) if (g.rule().equals(rule) && g.unit() == unit) return Optional.of(g);
        return Optional.empty();
    }

    /** Grade by {@code rule/unit}, for lookups on a hot path. */
    public Map<String, Grade> byGrade() {
        Map<String, Grade> out = new LinkedHashMap<>();
        grades.forEach(g -> out.put(g.grade(), g));
        return out;
    }

    /**
     * The next generation: {@code plan} applied, with the live run counting added and changed grades from
     * {@code countingFrom} on, and their history pending. Unchanged grades keep everything they had.
     */
    public RulesState next(RulesPlan plan, String origin, String text, Instant now, Instant countingFrom) {
        long gen = generation + 1;
        Map<String, Grade> old = byGrade();
        List<Grade> out = new ArrayList<>();
        List<Retired> gone = new ArrayList<>(retired);
        for (RulesPlan.Step s : plan.steps()) {
            switch (s.kind()) {
                case UNCHANGED -> out.add(Objects.requireNonNull(old.get(s.grade()), s.grade()));
                case ADDED -> out.add(new Grade(s.rule(), s.unit(), s.newVersion(), gen, countingFrom, Backfill.PENDING));
                case CHANGED -> {
                    out.add(new Grade(s.rule(), s.unit(), s.newVersion(), gen, countingFrom, Backfill.PENDING));
                    gone.add(new Retired(s.rule(), s.unit(), s.oldVersion(), gen, true));
                }
                case REMOVED -> gone.add(new Retired(s.rule(), s.unit(), s.oldVersion(), gen, false));
            }
        }
        return new RulesState(gen, now, origin, text, out, gone);
    }

    /** This record with {@code grade}'s history counted in. */
    public RulesState backfilled(String rule, TimeUnit unit) {
        List<Grade> out = grades.stream().map(g -> g.rule().equals(rule) && g.unit() == unit && g.backfill() == Backfill.PENDING
                ? new Grade(g.rule(), g.unit(), g.version(), g.since(), g.countingFrom(), Backfill.COMPLETE) : g).toList();
        return new RulesState(generation, appliedAt, rulesOrigin, rulesText, out, retired);
    }

    /** The generation a document with this {@code ver} was last written under. */
    public static long generationOf(long ver) {
        return ver >>> VER_GENERATION_SHIFT;
    }

    /** The least {@code ver} of a document written under generation {@code g}. */
    public static long verFloor(long g) {
        return g << VER_GENERATION_SHIFT;
    }

    // --- JSON ---

    private static final ObjectMapper JSON = new ObjectMapper();

    public ObjectNode toJson() {
        ObjectNode o = JSON.createObjectNode();
        o.put("pk", PK).put("id", ID).put("kind", "rules-state");
        o.put("generation", generation).put("appliedAt", appliedAt.toString());
        o.put("rulesOrigin", rulesOrigin).put("rules", rulesText);
        ArrayNode gs = o.putArray("grades");
        for (Grade g : grades) {
            ObjectNode n = gs.addObject().put("rule", g.rule()).put("unit", g.unit().code()).put("version", g.version())
                    .put("since", g.since());
            if (g.countingFrom() == null) n.putNull("countingFrom");
            else n.put("countingFrom", g.countingFrom().toString());
            n.put("backfill", g.backfill().word());
        }
        ArrayNode rs = o.putArray("retired");
        for (Retired r : retired) {
            rs.addObject().put("rule", r.rule()).put("unit", r.unit().code()).put("version", r.version())
                    .put("generation", r.generation()).put("why", r.changed() ? "changed" : "removed");
        }
        return o;
    }

    public static RulesState fromJson(JsonNode o) {
        try {
            List<Grade> grades = new ArrayList<>();
            for (JsonNode n : required(o, "grades")) {
                JsonNode from = n.get("countingFrom");
                grades.add(new Grade(text(n, "rule"), TimeUnit.fromCode(text(n, "unit")), text(n, "version"),
                        required(n, "since").asLong(), from == null || from.isNull() ? null : Instant.parse(from.asText()),
                        Backfill.of(text(n, "backfill"))));
            }
            List<Retired> retired = new ArrayList<>();
            JsonNode rs = o.get("retired");
            if (rs != null) {
                for (JsonNode n : rs) {
                    retired.add(new Retired(text(n, "rule"), TimeUnit.fromCode(text(n, "unit")), text(n, "version"),
                            required(n, "generation").asLong(), "changed".equals(text(n, "why"))));
                }
            }
            return new RulesState(required(o, "generation").asLong(), Instant.parse(text(o, "appliedAt")),
                    o.path("rulesOrigin").asText("?"), text(o, "rules"), grades, retired);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a rules-state record (" + e.getMessage() + "): " + o, e);
        }
    }

    public static RulesState fromJson(String text) {
        try {
            return fromJson(JSON.readTree(text));
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
        }
    }

    private static JsonNode required(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || n.isNull()) throw new IllegalArgumentException("no " + field);
        return n;
    }

    private static String text(JsonNode o, String field) {
        return required(o, field).asText();
    }
}
