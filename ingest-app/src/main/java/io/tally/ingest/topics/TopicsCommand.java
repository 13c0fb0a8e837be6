package io.tally.ingest.topics;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.config.Setting;
import io.tally.ingest.app.AggregationSettings;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.source.SourceTopics;
import io.tally.rules.RulesException;
import io.tally.rules.source.Sources;
import io.tally.ingest.app.KafkaClientSettings;
import io.tally.schemas.Topics;
import io.tally.schemas.topics.TopicProvisioner;
import io.tally.schemas.topics.TransactionVersionCheck;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaException;

/**
 * The command {@code ./tally topics} ({@code java -jar ingest-app.jar topics [--kafka.bootstrap.servers=...]}): creates
 * the topics of {@link Topics#specs} that are missing, with their partitions and configs, reports the ones that
 * exist (and how they differ from their spec), and returns once every partition has a leader. The local stack and
 * docker-compose.yml run it before any producer starts; ingest-app does the same at its own start. Existing topics
 * are never altered. Exit status: 0 ready, 1 the broker did not answer or a topic contradicts a required config,
 * 2 invalid settings.
 */
public final class TopicsCommand {
    public static final int EXIT_OK = 0;
    public static final int EXIT_FAILED = 1;
    public static final int EXIT_USAGE = 2;

    /**
     * What it uses: where Kafka is, the names (the event topics from the sources file), how long to wait; kafka.* settings reach its admin client. It accepts
     * the rest of ingest-app's settings and ignores them, so one configuration file or environment serves both.
     */
    public static final List<Setting<?>> SETTINGS = List.of(IngestSettings.BOOTSTRAP, IngestSettings.TOPIC_PREFIX,
            IngestSettings.TOPICS_TIMEOUT, AggregationSettings.SOURCES);

    static final String USAGE = """
            Usage: ./tally topics [--key=value ...]      (or: java -jar ingest-app.jar topics [--key=value ...])

            Creates the topics Tally needs (the sources file's event topics, transactions by default, and
            transactions.dlq, bucket-updates, bucket-updates.dlq, behind topics.prefix) where they are missing, with their partitions and configs, reports the ones that exist, and
            returns once every partition has a leader. Existing topics are never altered. kafka.* keys not listed pass
            through to the admin client (security settings, for example); ingest-app's other settings are accepted and
            ignored, so its configuration file serves here too. Exit status: 0 ready, 1 the broker did not answer or a
            topic contradicts a required config, 2 invalid settings.
            """;

    private TopicsCommand() {}

    /** Runs the command; the report goes to {@code out}, problems to {@code err}; returns the exit status. */
    public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (Help.requested(args)) {
            out.print(Help.text(USAGE, SETTINGS));
            return EXIT_OK;
        }
        Config c;
        try {
            c = Config.load(IngestSettings.all(), List.of(KafkaClientSettings.PREFIX), args, env);
        } catch (ConfigException e) {
            err.println(e.getMessage());
            err.println("(./tally topics --help lists every setting)");
            return EXIT_USAGE;
        }
        String bootstrap = c.get(IngestSettings.BOOTSTRAP);
        Duration timeout = c.get(IngestSettings.TOPICS_TIMEOUT);
        Topics.Names names = Topics.Names.withPrefix(c.get(IngestSettings.TOPIC_PREFIX));
        List<Topics.TopicSpec> specs;
        try {
            specs = Topics.specs(names, new SourceTopics(Sources.load(c.get(AggregationSettings.SOURCES)), names.prefix()).named());
        } catch (RulesException e) {
            err.println(e.getMessage());
            return EXIT_USAGE;
        }
        try (Admin admin = Admin.create(KafkaClientSettings.from(c, bootstrap).adminConfig(timeout))) {
            List<TopicProvisioner.Outcome> outcomes = new TopicProvisioner(admin, timeout).ensure(specs, true);
            out.print(report(bootstrap, specs, outcomes));
            TransactionVersionCheck.warning(admin).ifPresent(w -> err.println("warning: " + w));
            return EXIT_OK;
        } catch (IllegalStateException | KafkaException e) {
            err.println("topics on " + bootstrap + ": " + e.getMessage()
                    + (e instanceof KafkaException && e.getCause() != null ? ": " + e.getCause().getMessage() : ""));
            return EXIT_FAILED;
        }
    }

    /** One line per topic: name, partitions, the configs it was specified with, created or exists; then any notes. */
    static String report(String bootstrap, List<Topics.TopicSpec> specs, List<TopicProvisioner.Outcome> outcomes) {
        int width = specs.stream().mapToInt(s -> s.name().length()).max().orElse(0);
        StringBuilder sb = new StringBuilder("topics on ").append(bootstrap).append(", every partition with a leader:\n");
        for (int i = 0; i < specs.size(); i++) {
            Topics.TopicSpec spec = specs.get(i);
            TopicProvisioner.Outcome o = outcomes.get(i);
            String configs = String.join(",", new TreeMap<>(spec.configs()).entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).toList());
            sb.append(String.format("  %-" + width + "s  %3d partitions  %-28s  %s%n", o.name(), o.partitions(),
                    configs.isEmpty() ? "-" : configs, o.created() ? "created" : "exists"));
            o.notes().forEach(n -> sb.append("      note: it has ").append(n).append('\n'));
        }
        return sb.toString();
    }
}
