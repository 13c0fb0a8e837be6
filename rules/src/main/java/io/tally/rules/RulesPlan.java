package io.tally.rules;

import io.tally.model.TimeUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What moving from the grades counted now to a proposed set would do, grade by grade (rule × unit): added, changed
 * (the old version retired, the new one counted from scratch), removed, unchanged. A pure comparison of versions
 * ({@link RuleVersions}); it decides nothing about how a change is carried out.
 */
public final class RulesPlan {
    public enum Kind {
        ADDED, CHANGED, REMOVED, UNCHANGED;

        String word() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** One grade's fate; {@code oldVersion} is null for an added grade, {@code newVersion} for a removed one. */
    public record Step(Kind kind, String rule, TimeUnit unit, String oldVersion, String newVersion) {
        public String grade() {
            return rule + "/" + unit.code();
        }
    }

    private final List<Step> steps;

    private RulesPlan(List<Step> steps) {
        this.steps = List.copyOf(steps);
    }

    /**
     * Compares the grades {@code counted} now with {@code proposed}. Steps follow the proposed order, removed grades
     * last in their counted order.
     */
    public static RulesPlan between(List<GradeVersion> counted, List<GradeVersion> proposed) {
        Map<String, GradeVersion> before = byGrade(counted, "counted");
        Map<String, GradeVersion> after = byGrade(proposed, "proposed");
        List<Step> steps = new ArrayList<>();
        for (GradeVersion n : after.values()) {
            GradeVersion o = before.get(n.grade());
            if (o == null) steps.add(new Step(Kind.ADDED, n.rule(), n.unit(), null, n.version()));
            else steps.add(new Step(o.version().equals(n.version()) ? Kind.UNCHANGED : Kind.CHANGED, n.rule(), n.unit(),
                    o.version(), n.version()));
        }
        for (GradeVersion o : before.values()) {
            if (!after.containsKey(o.grade())) steps.add(new Step(Kind.REMOVED, o.rule(), o.unit(), o.version(), null));
        }
        return new RulesPlan(steps);
    }

    private static Map<String, GradeVersion> byGrade(List<GradeVersion> grades, String which) {
        Map<String, GradeVersion> out = new LinkedHashMap<>();
        for (GradeVersion g : grades) {
            if (out.putIfAbsent(g.grade(), g) != null) throw new IllegalArgumentException(which + " grades list " + g.grade() + " twice");
        }
        return out;
    }

    public List<Step> steps() {
        return steps;
    }

    public List<Step> steps(Kind kind) {
        return steps.stream().filter(s -> s.kind() == kind).toList();
    }

    public List<Step> added() {
        return steps(Kind.ADDED);
    }

    public List<Step> changed() {
        return steps(Kind.CHANGED);
    }

    public List<Step> removed() {
        return steps(Kind.REMOVED);
    }

    public List<Step> unchanged() {
        return steps(Kind.UNCHANGED);
    }

    /** Whether anything but unchanged grades. */
    public boolean changes() {
        return steps.stream().anyMatch(s -> s.kind() != Kind.UNCHANGED);
    }

    /**
     * For a terminal: one line per grade that changes, then one that counts them and the unchanged grades. An added
     * grade whose version a removed one had is marked: a rename, whose buckets still start empty under the new name.
     */
    public String render() {
        int unchanged = unchanged().size();
        if (!changes()) return "nothing to do: " + grades(unchanged) + " unchanged\n";
        List<Step> shown = steps.stream().filter(s -> s.kind() != Kind.UNCHANGED).toList();
        int width = Math.max("grade".length(), shown.stream().mapToInt(s -> s.grade().length()).max().orElse(0));
        Map<String, String> removedByVersion = new LinkedHashMap<>();
        removed().forEach(s -> removedByVersion.putIfAbsent(s.oldVersion(), s.grade()));
        StringBuilder out = new StringBuilder();
        out.append(String.format("%-" + width + "s  %-9s  %s\n", "grade", "change", "version"));
        for (Step s : shown) {
            String version = switch (s.kind()) {
                case ADDED -> s.newVersion() + (removedByVersion.containsKey(s.newVersion())
                        ? "  (the definition of removed " + removedByVersion.get(s.newVersion()) + ")" : "");
                case CHANGED -> s.oldVersion() + " -> " + s.newVersion();
                case REMOVED -> s.oldVersion();
                case UNCHANGED -> throw new IllegalStateException();
            };
            out.append(String.format("%-" + width + "s  %-9s  %s\n", s.grade(), s.kind().word(), version));
        }
        List<String> counts = new ArrayList<>();
        for (Kind k : Kind.values()) {
            int n = steps(k).size();
            if (n > 0) counts.add(n + " " + k.word());
        }
        out.append(String.join(", ", counts)).append(" (").append(grades(steps.size())).append(")\n");
        return out.toString();
    }

    private static String grades(int n) {
        return n + (n == 1 ? " grade" : " grades");
    }
}
