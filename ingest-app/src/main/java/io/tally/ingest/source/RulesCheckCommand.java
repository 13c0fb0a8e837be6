package io.tally.ingest.source;

import io.tally.config.Config;
import io.tally.config.Help;
import io.tally.config.Setting;
import io.tally.ingest.app.AggregationSettings;
import io.tally.ingest.app.IngestSettings;
import io.tally.rules.GradeRules;
import io.tally.rules.RulesException;
import io.tally.rules.source.RuleFields;
import io.tally.rules.source.Sources;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.RegistryClientSettings;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SchemaRegistryException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * {@code ./tally rules check [FILE]}: what ingest-app checks at start, without starting anything. Loads the rules
 * (FILE, else {@code ingest.rules.file}) and the sources ({@code ingest.sources.file}), then resolves every mapping
 * and rule path against the latest schema of each source's subject in the registry, and prints what fits and what
 * does not, naming source, subject, schema id, rule and path.
 */
public final class RulesCheckCommand {
    public static final int EXIT_OK = 0;
    /** A path does not fit a registered schema, or the registry could not be asked. */
    public static final int EXIT_PROBLEMS = 1;
    /** Bad arguments, or a rules or sources file that does not parse. */
    public static final int EXIT_USAGE = 2;

    public static final String USAGE = """
            Usage: ./tally rules check [RULES_FILE] [--ingest.sources.file=FILE] [--key=value ...]

            Checks a rules file and the sources file against the schema registry without starting anything: every
            rule field and every mapped path (transaction id, event time, domain, amount, currency, required fields)
            is resolved against the latest schema of each source's subject. RULES_FILE defaults to ingest.rules.file.
            Exit status: 0 all fit, 1 a path does not fit (or the registry could not be asked), 2 a file is invalid.
            """;

    public static final List<Setting<?>> SETTINGS = List.of(AggregationSettings.RULES, AggregationSettings.SOURCES,
            IngestSettings.REGISTRY, RegistryClientSettings.USER_INFO, IngestSettings.TOPIC_PREFIX);

    private RulesCheckCommand() {}

    public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (args.length == 0 || !args[0].equals("check")) {
            err.print(USAGE);
            err.println("(and ./tally rules plan OLD_RULES_FILE NEW_RULES_FILE: ./tally rules plan --help)");
            return EXIT_USAGE;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (Help.requested(rest)) {
            out.print(Help.text(USAGE, SETTINGS));
            return EXIT_OK;
        }
        CommandArgs a = CommandArgs.split(rest);
        if (a.files().size() > 1) {
            err.println("one rules file at most, got " + String.join(" and ", a.files()));
            return EXIT_USAGE;
        }
        String rulesFile = a.files().isEmpty() ? null : a.files().get(0);
        Config c = a.config(SETTINGS, env, err);
        if (c == null) return EXIT_USAGE;
        String rulesLocation = rulesFile != null ? rulesFile : c.get(AggregationSettings.RULES);
        String sourcesLocation = c.get(AggregationSettings.SOURCES);
        GradeRules rules;
        Sources sources;
        try {
            rules = GradeRules.load(rulesLocation);
            sources = Sources.load(sourcesLocation);
        } catch (RulesException e) {
            err.println(e.getMessage());
            return EXIT_USAGE;
        }
        out.println("rules " + rulesLocation + ": " + rules.rules().size() + " rules; sources " + sourcesLocation + ": "
                + sources.sources().stream().map(s -> s.name() + " (" + s.describeTopics() + ")").toList());
        String registryUrl = c.get(IngestSettings.REGISTRY);
        SourceTopics topics = new SourceTopics(sources, Topics.Names.withPrefix(c.get(IngestSettings.TOPIC_PREFIX)).prefix());
        SourceCheck.Report report;
        try {
            SchemaRegistryClient registry = new SchemaRegistryClient(
                    RegistryClientSettings.forUrls(registryUrl, c.get(RegistryClientSettings.USER_INFO)));
            report = SourceCheck.run(topics, RuleFields.of(rules), registry, SourceCheck.registrySubjectsIfNeeded(topics, registry));
        } catch (SchemaRegistryException e) {
            err.println("cannot ask the schema registry at " + registryUrl + ": " + e.getMessage()
                    + " (both files parse; their paths are unchecked)");
            return EXIT_PROBLEMS;
        }
        report.checked().forEach(s -> out.println("  fits: " + s));
        report.notes().forEach(n -> out.println("  note: " + n));
        report.problems().forEach(p -> out.println("  PROBLEM: " + p));
        out.println(report.ok() ? "ok" : report.problems().size() + " problem(s): events of these schemas would go to the DLQ as "
                + "SCHEMA_MISMATCH, and ingest-app refuses to start");
        return report.ok() ? EXIT_OK : EXIT_PROBLEMS;
    }
}
