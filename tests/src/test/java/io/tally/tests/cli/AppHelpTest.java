package io.tally.tests.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.config.Setting;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.replay.ReplaySettings;
import io.tally.ingest.source.RulesCheckCommand;
import io.tally.ingest.rules.RulesPlanCommand;
import io.tally.ingest.topics.TopicsCommand;
import io.tally.loadgen.LoadgenSettings;
import io.tally.read.ReadSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every application's {@code --help} (and {@code -h}) in a JVM of its own, as {@code java -jar} runs it: exit 0,
 * usage and every declared setting on stdout, nothing on stderr. The arguments and the environment also carry an
 * unknown setting and an unparsable value, which a request for help must not trip over; no Kafka, registry or
 * Cosmos address given is reachable, and the run must end in seconds, so help cannot have touched them.
 */
class AppHelpTest {
    @Test
    void ingestApp() throws Exception {
        CommandRun r = run("io.tally.ingest.Main", "--ingest.role=sink", "--no.such.setting=1", "--help");
        assertHelp(r, "Usage: ./tally ingest", IngestSettings.all());
    }

    @Test
    void ingestAppReplay() throws Exception {
        CommandRun r = run("io.tally.ingest.Main", "replay", "--from", "not-a-time", "-h");
        assertHelp(r, "Usage: ./tally replay", ReplaySettings.ALL);
        IngestSettings.all().forEach(s -> assertThat(r.out()).as("ingest-app setting " + s.key()).contains("--" + s.key() + " ("));
    }

    @Test
    void ingestAppTopics() throws Exception {
        CommandRun r = run("io.tally.ingest.Main", "topics", "--topics.timeout.ms=oops", "--help");
        assertHelp(r, "Usage: ./tally topics", TopicsCommand.SETTINGS);
    }

    @Test
    void ingestAppRulesCheck() throws Exception {
        CommandRun r = run("io.tally.ingest.Main", "rules", "check", "--schema.registry.url=", "--help");
        assertHelp(r, "Usage: ./tally rules check", RulesCheckCommand.SETTINGS);
    }

    @Test
    void ingestAppRulesPlan() throws Exception {
        CommandRun r = run("io.tally.ingest.Main", "rules", "plan", "/no/such/old.yaml", "--ingest.sources.file=", "--help");
        assertHelp(r, "Usage: ./tally rules plan", RulesPlanCommand.SETTINGS);
    }

    @Test
    void ingestAppRulesApply() throws Exception {
        CommandRun r = run("io.tally.ingest.Main", "rules", "apply", "/no/such/new.yaml", "--cosmos.endpoint=", "--help");
        assertHelp(r, "Usage: ./tally rules apply", io.tally.ingest.app.IngestSettings.all());
    }

    @Test
    void ingestAppRulesBackfill() throws Exception {
        CommandRun r = run("io.tally.ingest.Main", "rules", "backfill", "--backfill.max-records-per-second=oops", "--help");
        assertHelp(r, "Usage: ./tally rules backfill", io.tally.ingest.rules.BackfillSettings.ALL);
    }

    @Test
    void readService() throws Exception {
        CommandRun r = run("io.tally.read.ReadMain", "--read.http.port=oops", "--help");
        assertHelp(r, "Usage: ./tally serve", ReadSettings.all());
    }

    @Test
    void loadgen() throws Exception {
        CommandRun r = run("io.tally.loadgen.LoadgenMain", "-h", "--loadgen.events=-5");
        assertHelp(r, "Usage: ./tally loadgen", LoadgenSettings.ALL);
    }

    private static void assertHelp(CommandRun r, String usage, List<Setting<?>> settings) {
        assertThat(r.exit()).as("exit status; stderr: %s", r.err()).isZero();
        assertThat(r.err()).as("stderr").isEmpty();
        assertThat(r.out()).startsWith(usage);
        for (Setting<?> s : settings) {
            String def = s.defaultValue().filter(d -> !d.isEmpty() && !s.isSecret()).map(d -> "default " + d).orElse("");
            assertThat(r.out()).as(s.key()).contains("--" + s.key() + " (" + s.envName() + "), " + def);
            assertThat(r.out().replaceAll("\\s+", " ")).as(s.key() + " description").contains(s.doc().replaceAll("\\s+", " "));
        }
    }

    static CommandRun run(String mainClass, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(List.of(args));
        return CommandRun.of(cmd, Path.of("."), Map.of("TALLY_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1",
                "TALLY_COSMOS_ENDPOINT", "https://127.0.0.1:1", "TALLY_SINK_METRICS_PORT", "not-a-port"), Duration.ofSeconds(60));
    }
}
