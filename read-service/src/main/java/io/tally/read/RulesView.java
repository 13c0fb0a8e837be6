package io.tally.read;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import io.tally.rules.state.RulesState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The rules read-service answers with, as one immutable snapshot: the deployment's rules record and the rules it
 * applied, or, where the container holds no record, the rules file. Every request takes one snapshot and uses it
 * throughout (validation, which stored values count, completeness, retention), so a record refreshed meanwhile never
 * mixes two generations in one answer ({@link RulesWatch}).
 */
final class RulesView {
    /** The rules came from the container's record ({@code record}) or from {@code read.rules-file} ({@code file}). */
    static final String RECORD = "record";
    static final String FILE = "file";

    private final RulesState record;
    private final GradeRules rules;
    private final String origin;
    private final GradeRetention retention;
    /** Record only: rule, then unit; looked up on every read, so no key is built per lookup. */
    private final Map<String, Map<TimeUnit, GradeStatus>> statuses;
    /** Record only: the grades whose history is still being counted in (usually none). */
    private final List<RulesState.Grade> pending;

    private RulesView(RulesState record, GradeRules rules, String origin) {
        this.record = record;
        this.rules = rules;
        this.origin = origin;
        this.retention = new GradeRetention(rules);
        Map<String, Map<TimeUnit, GradeStatus>> byRule = new HashMap<>();
        List<RulesState.Grade> stillPending = new ArrayList<>();
        if (record != null) {
            for (RulesState.Grade g : record.grades()) {
                byRule.computeIfAbsent(g.rule(), r -> new EnumMap<>(TimeUnit.class)).put(g.unit(), new GradeStatus(g));
                if (!g.complete()) stillPending.add(g);
            }
        }
        this.statuses = byRule;
        this.pending = List.copyOf(stillPending);
    }

    /** The rules of {@code read.rules-file}, for a container without a record. */
    static RulesView ofFile(GradeRules rules, String location) {
        return new RulesView(null, rules, location);
    }

    /**
     * The record and the rules it applied.
     *
     * @throws io.tally.rules.RulesException when the record's rules text does not parse
     */
    static RulesView ofRecord(RulesState record) {
        return new RulesView(record, record.rules(), record.rulesOrigin());
    }

    Optional<RulesState> record() {
        return Optional.ofNullable(record);
    }

    GradeRules rules() {
        return rules;
    }

    GradeRetention retention() {
        return retention;
    }

    /** {@link #RECORD} or {@link #FILE}. */
    String source() {
        return record == null ? FILE : RECORD;
    }

    /**
     * How to read grade {@code rule} in {@code unit}. With a record, empty for a grade it does not count (removed, or
     * never added): an unknown grade. Without one, every grade reads as it always did.
     */
    Optional<GradeStatus> status(String rule, TimeUnit unit) {
        if (record == null) return Optional.of(GradeStatus.UNRECORDED);
        Map<TimeUnit, GradeStatus> units = statuses.get(rule);
        return Optional.ofNullable(units == null ? null : units.get(unit));
    }

    /** The grades whose bucket holding {@code at} may still lack history: rule, then its units (codes), sorted. */
    Map<String, Set<String>> incompleteAt(Instant at) {
        Map<String, Set<String>> out = new TreeMap<>();
        for (RulesState.Grade g : pending) {
            if (g.incomplete(g.unit().bucketStart(g.unit().bucketIndex(at)))) {
                out.computeIfAbsent(g.rule(), r -> new TreeSet<>()).add(g.unit().code());
            }
        }
        return out;
    }

    /**
     * Where the record and the rules it applied disagree: a grade of the rules text the record does not list (read as
     * unknown), or a grade the record lists for a rule or unit the text lacks (unreachable: requests are checked
     * against the text). Empty for a file, and for every record {@code ./tally rules} writes.
     */
    List<String> disagreements() {
        List<String> out = new ArrayList<>();
        if (record == null) return out;
        for (GradeRule r : rules.rules()) {
            for (TimeUnit u : r.units()) {
                if (status(r.name(), u).isEmpty()) out.add(r.name() + "/" + u.code() + " is in the rules but not in the record");
            }
        }
        for (RulesState.Grade g : record.grades()) {
            if (rules.rule(g.rule()).filter(r -> r.units().contains(g.unit())).isEmpty()) {
                out.add(g.grade() + " is in the record but not in its rules");
            }
        }
        return out;
    }

    /** One line for the log: where the rules come from and what they count. */
    String summary() {
        String grades = rules.rules().stream().map(GradeRule::name).toList().toString();
        if (record == null) return "the rules file " + origin + ": rules " + grades;
        return "the rules record, generation " + record.generation() + " applied at " + record.appliedAt() + " from " + origin
                + ": rules " + grades + (pending.isEmpty() ? "" : ", history pending for "
                + pending.stream().map(RulesState.Grade::grade).toList());
    }

    /** The answer of {@code GET /v1/rules}. */
    ObjectNode describe() {
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("source", source());
        if (record == null) {
            body.putNull("generation");
            body.putNull("appliedAt");
            body.put("rulesOrigin", origin);
            ArrayNode grades = body.putArray("grades");
            for (GradeRule r : rules.rules()) {
                for (TimeUnit u : r.units()) {
                    ObjectNode g = grades.addObject().put("rule", r.name()).put("unit", u.code());
                    g.putNull("version");
                    g.putNull("since");
                    g.putNull("countingFrom");
                    g.put("backfill", RulesState.Backfill.NONE.word()).put("complete", true);
                }
            }
            body.putArray("retired");
            return body;
        }
        // The record's own form of grades and retired grades, so the API and the stored document never drift apart.
        ObjectNode stored = record.toJson();
        body.put("generation", record.generation()).put("appliedAt", record.appliedAt().toString()).put("rulesOrigin", origin);
        ArrayNode grades = (ArrayNode) stored.get("grades");
        for (int i = 0; i < grades.size(); i++) ((ObjectNode) grades.get(i)).put("complete", record.grades().get(i).complete());
        body.set("grades", grades);
        body.set("retired", stored.get("retired"));
        return body;
    }
}
