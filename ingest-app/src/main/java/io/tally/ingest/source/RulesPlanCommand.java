package io.tally.ingest.source;

import io.tally.config.Config;
import io.tally.config.Help;
import io.tally.config.Setting;
import io.tally.ingest.app.AggregationSettings;
import io.tally.rules.GradeRules;
import io.tally.rules.RuleVersions;
import io.tally.rules.RulesException;
import io.tally.rules.RulesPlan;
import io.tally.rules.source.Sources;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/**
 * {@code ./tally rules plan OLD NEW}: what moving from one rules file to another would do, grade by grade
 * ({@link RulesPlan}). Reads two files and the sources file, nothing else: no registry, Kafka or Cosmos.
 */
public final class RulesPlanCommand {
    public static final int EXIT_NOTHING_TO_DO = 0;
    /** Bad arguments, or a rules or sources file that does not parse. */
    public static final int EXIT_USAGE = 2;
    /** Some grade would be added, changed or removed: distinct from 1, which a crash of the JVM also gives. */
    public static final int EXIT_CHANGES = 3;

    public static final String USAGE = """
            Usage: ./tally rules plan OLD_RULES_FILE NEW_RULES_FILE [--ingest.sources.file=FILE] [--key=value ...]

            Compares two rules files grade by grade (a rule in one of its units) and prints what moving from OLD to
            NEW would do: grades added, changed (a new definition under the same name: a new version, counted from
            scratch, never merged with the old one), removed, and how many stay unchanged. A grade's version is a hash
            of everything that decides its values: entity, qualifier, filter, value, aggregations, unit, retention,
            and where each source (ingest.sources.file, the same for both files) reads the fields. The name is not in
            it: a rename is a removal and an addition. builtin:default-rules.yaml names the shipped rules.
            It changes nothing and contacts nothing. Today OLD is a file you give; a later version reads it from the
            deployment's own record of the grades it counts, and applies the plan.
            Exit status: 0 nothing would change, 3 something would, 2 bad arguments or an invalid file.
            """;

    public static final List<Setting<?>> SETTINGS = List.of(AggregationSettings.SOURCES);

    private RulesPlanCommand() {}

    /** {@code args}: what follows {@code rules plan}. */
    public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (Help.requested(args)) {
            out.print(Help.text(USAGE, SETTINGS));
            return EXIT_NOTHING_TO_DO;
        }
        CommandArgs a = CommandArgs.split(args);
        List<String> files = a.files();
        if (files.size() != 2) {
            err.println("expected two rules files, OLD and NEW; got " + files.size() + (files.isEmpty() ? "" : ": " + files));
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
}
