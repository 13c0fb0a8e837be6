package io.tally.ingest.rules;

import com.azure.cosmos.CosmosAsyncClient;
import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.config.Setting;
import io.tally.cosmos.CosmosClients;
import io.tally.ingest.app.AggregationSettings;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.source.CommandArgs;
import io.tally.rules.GradeRules;
import io.tally.rules.RuleVersions;
import io.tally.rules.RulesException;
import io.tally.rules.RulesPlan;
import io.tally.rules.source.Sources;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesStateStore;
import java.io.PrintStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * {@code ./tally rules plan FILE}: what applying a rules file to the deployment would do, grade by grade
 * ({@link RulesPlan}), against the deployment's record ({@link RulesState}, read from the bucket container).
 * {@code ./tally rules plan OLD NEW} compares two files and contacts nothing.
 */
public final class RulesPlanCommand {
    public static final int EXIT_NOTHING_TO_DO = 0;
    /** Bad arguments, or a rules or sources file that does not parse. */
    public static final int EXIT_USAGE = 2;
    /** Some grade would be added, changed or removed: distinct from 1, which a crash of the JVM also gives. */
    public static final int EXIT_CHANGES = 3;

    public static final String USAGE = """
            Usage: ./tally rules plan RULES_FILE [--key=value ...]
                   ./tally rules plan OLD_RULES_FILE NEW_RULES_FILE [--ingest.sources.file=FILE]

            With one file: compares it with what the deployment counts (its rules record in the bucket container, the
            cosmos.* settings) and prints what ./tally rules apply would do: grades added (counted live from the seam,
            their history filled by ./tally rules backfill), changed (a new definition under the same name: a new
            version, never merged with the old one, whose values leave each document at its next write), removed (no
            longer written or answered), and how many stay unchanged. With two files: the same between OLD and NEW,
            contacting nothing.
            A grade is a rule in one of its units; its version is a hash of everything that decides its values: entity,
            qualifier, filter, value, aggregations, unit, retention, and where each source (ingest.sources.file) reads
            the fields. The name is not in it: a rename is a removal and an addition. builtin:default-rules.yaml names
            the shipped rules. It changes nothing.
            Exit status: 0 nothing would change, 3 something would, 2 bad arguments or an invalid file, 1 the record
            could not be read.
            """;

    public static final List<Setting<?>> SETTINGS = List.of(AggregationSettings.SOURCES);

    private RulesPlanCommand() {}

    /** {@code args}: what follows {@code rules plan}. */
    public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (Help.requested(args)) {
            out.print(Help.text(USAGE, IngestSettings.all()));
            return EXIT_NOTHING_TO_DO;
        }
        CommandArgs a = CommandArgs.split(args);
        List<String> files = a.files();
        if (files.size() == 1) return againstDeployment(files.get(0), a, env, out, err);
        if (files.size() != 2) {
            err.println("expected a rules file (against the deployment) or two (OLD and NEW); got " + files.size());
            err.print(USAGE);
            return EXIT_USAGE;
        }
        Config c = a.config(SETTINGS, env, err);
        if (c == null) return EXIT_USAGE;
        String sourcesLocation = c.get(AggregationSettings.SOURCES);
        RulesPlan plan;
        try {
            Sources sources = Sources.load(sourcesLocation);
            plan = RulesPlan.between(RuleVersions.of(GradeRules.load(files.get(0)), sources),
                    RuleVersions.of(GradeRules.load(files.get(1)), sources));
        } catch (RulesException e) {
            err.println(e.getMessage());
            return EXIT_USAGE;
        }
        out.println("rules plan: " + files.get(0) + " -> " + files.get(1) + " (sources " + sourcesLocation + ")");
        out.print(plan.render());
        return plan.changes() ? EXIT_CHANGES : EXIT_NOTHING_TO_DO;
    }

    private static int againstDeployment(String file, CommandArgs a, Map<String, String> env, PrintStream out, PrintStream err) {
        return withDeployment(file, a, env, err, (d) -> {
            DeploymentRules.Proposal p = d.rules().propose(d.file());
            out.println("rules plan: " + d.describe(p) + " -> " + file + " (sources " + d.settings().aggregation().sourcesLocation() + ")");
            if (p.current().isEmpty()) {
                out.println("no rules record yet: applying " + file + " records it as generation 0, every grade counted from the start");
            }
            out.print(p.plan().render());
            if (p.current().isPresent() && p.plan().changes()) out.print(consequences(p.plan(), d.settings(), Instant.now()));
            return p.plan().changes() || p.current().isEmpty() ? EXIT_CHANGES : EXIT_NOTHING_TO_DO;
        });
    }

    /** What applying a plan now would set in motion. */
    static String consequences(RulesPlan plan, IngestSettings settings, Instant now) {
        Instant seam = DeploymentRules.seamAfter(now, settings.aggregation().rulesSwitchDelay());
        StringBuilder s = new StringBuilder("applied now: ");
        if (!plan.added().isEmpty() || !plan.changed().isEmpty()) {
            s.append("added and changed grades count live from about ").append(seam)
                    .append(" (the seam), their history before it once ./tally rules backfill has run; ");
        }
        if (!plan.removed().isEmpty() || !plan.changed().isEmpty()) {
            s.append("removed and replaced versions leave each document at its next write and are no longer answered; ");
        }
        return s.append("instances running the old rules stop within ").append(settings.aggregation().rulesWatchInterval().toSeconds())
                .append(" s and must be started with the new file.\n").toString();
    }

    /** The SDK's messages carry kilobytes of diagnostics after the first sentence; a terminal needs the sentence. */
    static String firstLine(RuntimeException e) {
        String m = String.valueOf(e.getMessage());
        int cut = m.indexOf(" More info:");
        if (cut < 0) cut = m.indexOf(". More details");
        return e.getClass().getSimpleName() + ": " + (cut > 0 ? m.substring(0, cut) : m.length() > 300 ? m.substring(0, 300) + "..." : m);
    }

    /** What a command against the deployment's record has open. */
    record Deployment(IngestSettings settings, DeploymentRules.RulesFile file, DeploymentRules rules) {
        String describe(DeploymentRules.Proposal p) {
            return p.current().map(s -> "the deployment (" + DeploymentRules.describe(s.state()) + ")").orElse("the deployment (no record)");
        }
    }

    /** Loads the settings and {@code file}, opens the container, runs {@code body}; usage errors exit 2, Cosmos ones 1. */
    static int withDeployment(String file, CommandArgs a, Map<String, String> env, PrintStream err, Function<Deployment, Integer> body) {
        IngestSettings settings;
        DeploymentRules.RulesFile rules;
        try {
            settings = IngestSettings.load(a.flags().toArray(String[]::new), env);
            rules = DeploymentRules.RulesFile.load(file, Sources.load(settings.aggregation().sourcesLocation()));
        } catch (ConfigException | RulesException e) {
            err.println(e.getMessage());
            return EXIT_USAGE;
        }
        CosmosAsyncClient cosmos = null;
        try {
            cosmos = CosmosClients.build(settings.cosmos());
            var container = CosmosClients.container(cosmos, settings.cosmos());
            return body.apply(new Deployment(settings, rules, new DeploymentRules(new RulesStateStore(container))));
        } catch (RuntimeException e) {
            err.println("cannot read or write the rules record in " + settings.cosmos().database() + "/" + settings.cosmos().container()
                    + " at " + settings.cosmos().endpoint() + ": " + firstLine(e));
            return 1;
        } finally {
            if (cosmos != null) cosmos.close();
        }
    }
}
