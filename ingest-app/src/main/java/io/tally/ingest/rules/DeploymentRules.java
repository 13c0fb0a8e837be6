package io.tally.ingest.rules;

import io.tally.rules.GradeRules;
import io.tally.rules.GradeVersion;
import io.tally.rules.RuleVersions;
import io.tally.rules.RulesPlan;
import io.tally.rules.source.Sources;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesStateStore;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rules file against the deployment's record of what it counts ({@link RulesState}): whether a process may start with
 * it, what applying it would do, and applying it. ingest-app and replay start only with the rules the record names
 * (the first start of a deployment records its file as generation 0); {@code ./tally rules plan} and {@code apply} are
 * the only way to change them.
 */
public final class DeploymentRules {
    private static final Logger log = LoggerFactory.getLogger(DeploymentRules.class);

    private final RulesStateStore store;

    public DeploymentRules(RulesStateStore store) {
        this.store = store;
    }

    /** A rules file read for a comparison: where it came from, its text, its rules and their grade versions. */
    public record RulesFile(String location, String text, GradeRules rules, List<GradeVersion> versions) {
        public static RulesFile load(String location, Sources sources) {
            String text = GradeRules.text(location);
            GradeRules rules = GradeRules.parse(text, location);
            return new RulesFile(location, text, rules, RuleVersions.of(rules, sources));
        }
    }

    /** Thrown when a process starts with a rules file other than the applied one. */
    public static final class Mismatch extends RuntimeException {
        Mismatch(String message) {
            super(message);
        }
    }

    /**
     * The record a process starting with {@code file} counts under. Without a record, {@code file} becomes generation 0
     * (the deployment counts it from the start). With one, {@code file} must have the record's grade versions.
     *
     * @throws Mismatch when it does not, saying what differs and what to run
     */
    public RulesState counted(RulesFile file, Instant now) {
        Optional<RulesStateStore.Stored> stored = store.read();
        if (stored.isEmpty()) {
            try {
                RulesState first = RulesState.first(file.versions(), file.location(), file.text(), now);
                store.create(first);
                log.info("no rules record yet: recorded {} as generation 0 ({} grades, counted from the start)", file.location(),
                        first.grades().size());
                return first;
            } catch (RulesStateStore.Conflict e) { // another instance recorded first: judge against what it wrote
                stored = store.read();
                if (stored.isEmpty()) throw new IllegalStateException("the rules record was created, then vanished", e);
            }
        }
        RulesState state = stored.get().state();
        RulesPlan plan = RulesPlan.between(state.versions(), file.versions());
        if (plan.changes()) throw new Mismatch(mismatch(file, state, plan));
        return state;
    }

    static String mismatch(RulesFile file, RulesState state, RulesPlan plan) {
        return "the rules in " + file.location() + " differ from those this deployment counts (" + describe(state) + "):\n"
                + plan.render()
                + "To count " + file.location() + ": ./tally rules apply " + file.location()
                + " (./tally rules plan " + file.location() + " shows the same without changing anything).\n"
                + "To go on counting the applied rules, start with their file (" + state.rulesOrigin() + ", or the text under"
                + " \"rules\" in the record: pk " + RulesState.PK + ", id " + RulesState.ID + " in the bucket container).";
    }

    public static String describe(RulesState s) {
        return "generation " + s.generation() + ", applied " + s.appliedAt() + " from " + s.rulesOrigin();
    }

    /** What applying {@code file} would do against the record; a plan of additions only when there is no record yet. */
    public record Proposal(Optional<RulesStateStore.Stored> current, RulesPlan plan) {}

    public Proposal propose(RulesFile file) {
        Optional<RulesStateStore.Stored> current = store.read();
        List<GradeVersion> counted = current.map(s -> s.state().versions()).orElse(List.of());
        return new Proposal(current, RulesPlan.between(counted, file.versions()));
    }

    /**
     * Applies {@code file}: the next generation counts its added and changed grades live from the seam on, and their
     * history is pending until a backfill counts it. The seam is the next whole second at least {@code switchDelay}
     * after {@code now}: time for every running instance on the old rules to see the new generation and stop
     * ({@code ingest.rules.watch-interval.ms}) before any event it could still take ({@code ingest.max-future-skew.ms}
     * ahead of its record timestamp) falls after the seam. Without a record, {@code file} becomes generation 0.
     *
     * @throws RulesStateStore.Conflict when the record changed since {@code proposal} read it
     */
    public RulesState apply(Proposal proposal, RulesFile file, Instant now, Duration switchDelay) {
        if (proposal.current().isEmpty()) {
            RulesState first = RulesState.first(file.versions(), file.location(), file.text(), now);
            store.create(first);
            return first;
        }
        RulesStateStore.Stored current = proposal.current().get();
        Instant seam = seamAfter(now, switchDelay);
        RulesState next = current.state().next(proposal.plan(), file.location(), file.text(), now, seam);
        store.replace(current, next);
        return next;
    }

    /** The seam an apply at {@code now} sets: the next whole second at least {@code switchDelay} later. */
    public static Instant seamAfter(Instant now, Duration switchDelay) {
        return now.plus(switchDelay).truncatedTo(ChronoUnit.SECONDS).plus(1, ChronoUnit.SECONDS);
    }

    /** The record as it stands, if any. */
    public Optional<RulesState> current() {
        return store.read().map(RulesStateStore.Stored::state);
    }
}
