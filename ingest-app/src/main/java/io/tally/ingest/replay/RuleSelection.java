package io.tally.ingest.replay;

import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The rules a replay rebuilds. Every rule still fans out (the live run's code path, unchanged); buckets
 * of rules not selected are dropped afterwards, recognised by their grade ({@code name} or {@code name:qualifier}).
 */
record RuleSelection(Set<String> names) {

    /** {@code requested} empty selects every rule; an unknown name is an error listing the known ones. */
    static RuleSelection of(GradeRules rules, Set<String> requested) {
        List<String> known = rules.rules().stream().map(GradeRule::name).toList();
        if (requested.isEmpty()) return new RuleSelection(Set.copyOf(known));
        Set<String> unknown = new TreeSet<>(requested);
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown rule(s) " + unknown + " in --rules; the rules file defines " + known);
        }
        return new RuleSelection(Set.copyOf(requested));
    }

    boolean selects(String grade) {
        int colon = grade.indexOf(':');
        return names.contains(colon < 0 ? grade : grade.substring(0, colon));
    }
}
