package io.tally.ingest.rules;

import io.tally.config.Help;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.source.CommandArgs;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesStateStore;
import java.io.PrintStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * {@code ./tally rules apply FILE}: makes {@code FILE} the rules the deployment counts, as the next generation of its
 * record ({@link DeploymentRules#apply}). It writes only the record: running instances on the old rules see it and stop,
 * instances started with {@code FILE} count it, and {@code ./tally rules backfill} fills the history of what was added.
 */
public final class RulesApplyCommand {
    public static final int EXIT_APPLIED = 0;
    public static final int EXIT_USAGE = 2;
    /** Another apply (or a backfill marking its grades) changed the record between reading and writing it. */
    public static final int EXIT_CONFLICT = 4;
    /** The history of the last change is still pending: a backfill counts one generation's grades from scratch. */
    public static final int EXIT_BACKFILL_PENDING = 5;

    public static final String USAGE = """
            Usage: ./tally rules apply RULES_FILE [--key=value ...]

            Makes RULES_FILE the rules this deployment counts (its rules record in the bucket container, the cosmos.*
            settings), as ./tally rules plan RULES_FILE shows: the next generation counts added and changed grades live
            from a seam (the next whole second at least ingest.max-future-skew.ms + ingest.rules.watch-interval.ms +
            ingest.rules.switch-margin.ms from now), and their history before it once ./tally rules backfill has run;
            removed grades and replaced versions are no longer answered, and leave each document at its next write.
            Instances running the old rules stop within ingest.rules.watch-interval.ms; start them with RULES_FILE.
            Without a record yet, RULES_FILE becomes generation 0 (every grade counted from the start).
            Refused while the history of the previous change is pending (./tally rules backfill first).
            Exit status: 0 applied, or nothing to do; 2 bad arguments or an invalid file; 4 the record changed meanwhile
            (run again); 5 a backfill is pending; 1 the record could not be read or written.
            """;

    private RulesApplyCommand() {}

    public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (Help.requested(args)) {
            out.print(Help.text(USAGE, IngestSettings.all()));
            return EXIT_APPLIED;
        }
        CommandArgs a = CommandArgs.split(args);
        List<String> files = a.files();
        if (files.size() != 1) {
            err.println("expected one rules file; got " + files.size());
            err.print(USAGE);
            return EXIT_USAGE;
        }
        String file = files.get(0);
        return RulesPlanCommand.withDeployment(file, a, env, err, d -> {
            DeploymentRules.Proposal p = d.rules().propose(d.file());
            if (p.current().isPresent() && !p.plan().changes()) {
                out.println("nothing to do: " + file + " is what the deployment counts (" + DeploymentRules.describe(p.current().get().state()) + ")");
                return EXIT_APPLIED;
            }
            List<RulesState.Grade> unfilled = p.current().map(c -> c.state().grades().stream().filter(g -> !g.complete()).toList())
                    .orElse(List.of());
            if (!unfilled.isEmpty()) {
                // A backfill counts its generation's pending grades from its own start: applying another generation now
                // would leave history half counted under one seam and counted again under the next.
                err.println("the history of " + unfilled.stream().map(RulesState.Grade::grade).toList() + " (generation "
                        + p.current().get().state().generation() + ") is still pending: run ./tally rules backfill to the end, then apply");
                return EXIT_BACKFILL_PENDING;
            }
            out.println("rules apply: " + d.describe(p) + " -> " + file);
            out.print(p.plan().render());
            RulesState applied;
            try {
                applied = d.rules().apply(p, d.file(), Instant.now(), d.settings().aggregation().rulesSwitchDelay());
            } catch (RulesStateStore.Conflict e) {
                err.println(e.getMessage() + ": nothing applied; run ./tally rules plan " + file + " and apply again");
                return EXIT_CONFLICT;
            }
            out.println("applied: generation " + applied.generation() + " at " + applied.appliedAt());
            List<RulesState.Grade> pending = applied.grades().stream().filter(g -> !g.complete()).toList();
            if (!pending.isEmpty()) {
                out.println("seam: " + pending.get(0).countingFrom() + "; " + pending.size() + " grade(s) count live from there, their history"
                        + " before it is pending: ./tally rules backfill");
            }
            if (applied.generation() > 0) {
                out.println("next: start ingest-app with --ingest.rules.file=" + file + " (instances on the old rules stop within "
                        + d.settings().aggregation().rulesWatchInterval().toSeconds() + " s)");
            }
            return EXIT_APPLIED;
        });
    }
}
