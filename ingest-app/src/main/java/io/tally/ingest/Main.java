package io.tally.ingest;

import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.replay.ReplayCommand;
import io.tally.ingest.rules.BackfillCommand;
import io.tally.ingest.rules.DeploymentRules;
import io.tally.ingest.rules.RulesApplyCommand;
import io.tally.ingest.rules.RulesPlanCommand;
import io.tally.ingest.source.RulesCheckCommand;
import io.tally.ingest.topics.TopicsCommand;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entry class of ingest-app's jar. The first argument chooses what runs: {@code replay} (a bounded batch job,
 * {@link ReplayCommand}), {@code topics} (create or report the topics, {@link TopicsCommand}), {@code rules check} (rules and sources against the
 * registry, {@link RulesCheckCommand}), {@code rules plan} and {@code rules apply} (a rules file against the deployment's record, {@link RulesPlanCommand}, {@link RulesApplyCommand}), anything else the
 * roles of {@link IngestApp} (aggregate, sink or both, as {@code --ingest.role} says) until stopped. Only this class
 * knows all three, so the packages it dispatches to never import each other for it.
 */
public final class Main {
    private static final Logger log = LoggerFactory.getLogger(Main.class);

    static final String USAGE = """
            Usage: ./tally ingest [--key=value ...]      (or: java -jar ingest-app.jar [--key=value ...])
                   ./tally replay --help                 rebuild a historical event-time range (a batch job)
                   ./tally topics --help                 create the topics where missing, report the others
                   ./tally rules check [FILE]            check rules and sources against the schema registry
                   ./tally rules plan FILE               what applying a rules file to the deployment would change
                   ./tally rules apply FILE              make FILE the rules the deployment counts
                   ./tally rules backfill                count the history of the grades apply added or changed

            Runs ingest-app until stopped: the aggregation (Kafka Streams, exactly-once: decode, validate, dedupe,
            fan out by the grade rules, aggregate into bucket-updates) and the Cosmos sink (coalesce, bulk write,
            commit after the write), one or both as --ingest.role says. kafka.* keys not listed pass through to
            every Kafka client; kafka.streams.*, kafka.consumer.* and kafka.producer.* to Kafka Streams, the sink's
            consumer and its dead-letter producer alone (and win there). Exit status: 1 when it could not start or the
            sink stopped, 2 for invalid settings.
            """;

    private Main() {}

    public static void main(String[] args) throws InterruptedException {
        String command = args.length > 0 ? args[0] : "";
        String[] rest = args.length > 0 ? Arrays.copyOfRange(args, 1, args.length) : args;
        switch (command) {
            case "replay" -> System.exit(ReplayCommand.run(rest, System.getenv()));
            case "topics" -> System.exit(TopicsCommand.run(rest, System.getenv(), System.out, System.err));
            case "rules" -> System.exit(rules(rest));
            default -> runRoles(args);
        }
    }

    /** {@code rules plan|apply|backfill|check ...}: the check command reads its own {@code check} (and says what it expects without). */
    private static int rules(String[] args) {
        String sub = args.length > 0 ? args[0] : "";
        String[] rest = args.length > 0 ? Arrays.copyOfRange(args, 1, args.length) : args;
        return switch (sub) {
            case "plan" -> RulesPlanCommand.run(rest, System.getenv(), System.out, System.err);
            case "apply" -> RulesApplyCommand.run(rest, System.getenv(), System.out, System.err);
            case "backfill" -> BackfillCommand.run(rest, System.getenv(), System.out, System.err);
            default -> RulesCheckCommand.run(args, System.getenv(), System.out, System.err);
        };
    }

    private static void runRoles(String[] args) throws InterruptedException {
        if (Help.requested(args)) {
            System.out.print(Help.text(USAGE, IngestSettings.all()));
            return;
        }
        IngestSettings settings;
        try {
            settings = IngestSettings.load(args, System.getenv());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.err.println("(./tally ingest --help lists every setting)");
            System.exit(2);
            return;
        }
        IngestApp app = new IngestApp(settings);
        Runtime.getRuntime().addShutdownHook(new Thread(app::close, "ingest-shutdown"));
        try {
            app.start();
        } catch (DeploymentRules.Mismatch e) {
            log.error("ingest-app could not start: {}", e.getMessage());
            System.exit(1);
        } catch (RuntimeException e) {
            // Half-started (say Streams running, Cosmos unreachable) is worse than stopped: exit so a supervisor restarts us.
            log.error("ingest-app could not start", e);
            System.exit(1);
        }
        if (app.awaitStopped()) System.exit(1);
    }
}
