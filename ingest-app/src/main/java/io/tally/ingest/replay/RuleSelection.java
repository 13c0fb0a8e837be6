package io.tally.ingest.replay;

import io.tally.model.EntityBucket;
import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The rules a replay rebuilds. Every rule still fans out and aggregates (the live run's code path, unchanged), since
 * an entity bucket document holds every grade of its entity and is written whole; the documents that hold no grade of
 * a selected rule are not written.
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

    /** Whether the document holds a grade of a selected rule, inline or spilled. */
    boolean selectsAny(EntityBucket d) {
        for (String rule : names) {
            if (d.grades().containsKey(rule) || d.qualified().containsKey(rule) || d.spilled().containsKey(rule)
                    || d.minutes().containsKey(rule)) return true;
        }
        return false;
    }
}
