package io.tally.tests.aggregation;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.topics.TopicsCommand;
import io.tally.schemas.Topics;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.kafka.TestKafka;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code ./tally topics} (the local stack's and docker-compose's topic step) on a real broker: it creates what is
 * missing with the specs of {@link Topics}, reports what exists with how it differs, leaves existing topics as they
 * are, and says clearly when the broker does not answer.
 */
@ExtendWith(LocalStackExtension.class)
class TopicsCommandIT {
    @Test
    void createsWhatIsMissingThenReportsWhatExists(TestKafka kafka) throws Exception {
        String prefix = "cmd-" + UUID.randomUUID().toString().substring(0, 8) + ".";
        Topics.Names names = Topics.Names.withPrefix(prefix);
        kafka.createTopics(List.of(TestKafka.topic(names.transactions(), 2, Map.of())));
        // An ingest-app setting it does not use is accepted: one configuration serves the app and the command.
        String[] args = {"--kafka.bootstrap.servers=" + kafka.bootstrapServers(), "--topics.prefix=" + prefix, "--ingest.role=sink"};

        Run first = run(args);
        assertThat(first.exit).as("exit status; stderr: %s", first.err).isEqualTo(TopicsCommand.EXIT_OK);
        assertThat(first.out).containsPattern("(?m)^  " + Pattern.quote(names.transactions()) + " +2 partitions .* exists$")
                .contains("note: it has 2 partitions, fewer than the 6 Tally creates")
                .containsPattern("(?m)^  " + Pattern.quote(names.bucketUpdates()) + " +6 partitions +cleanup.policy=compact +created$")
                .containsPattern("(?m)^  " + Pattern.quote(names.bucketUpdatesDlq()) + " +3 partitions .* created$");
        try (Admin admin = kafka.admin()) {
            Map<String, TopicDescription> d = admin.describeTopics(List.of(names.transactions(), names.transactionsDlq()))
                    .allTopicNames().get();
            assertThat(d.get(names.transactions()).partitions()).as("an existing topic is left as it is").hasSize(2);
            assertThat(d.get(names.transactionsDlq()).partitions()).hasSize(3);
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, names.bucketUpdates());
            assertThat(admin.describeConfigs(List.of(r)).all().get().get(r).get("cleanup.policy").value()).isEqualTo("compact");
        }

        Run second = run(args);
        assertThat(second.exit).isEqualTo(TopicsCommand.EXIT_OK);
        assertThat(second.out).doesNotContain("created");
    }

    @Test
    void aBucketUpdatesTopicThatIsNotCompactedFailsTheCommand(TestKafka kafka) throws Exception {
        String prefix = "cmd-bad-" + UUID.randomUUID().toString().substring(0, 8) + ".";
        kafka.createTopics(List.of(TestKafka.topic(prefix + Topics.BUCKET_UPDATES, 6, Map.of("cleanup.policy", "delete"))));
        Run r = run("--kafka.bootstrap.servers=" + kafka.bootstrapServers(), "--topics.prefix=" + prefix);
        assertThat(r.exit).isEqualTo(TopicsCommand.EXIT_FAILED);
        assertThat(r.err).contains("has cleanup.policy=delete; Tally needs compact");
    }

    @Test
    void anUnreachableBrokerIsNamedWithinTheTimeout() throws Exception {
        long t0 = System.nanoTime();
        Run r = run("--kafka.bootstrap.servers=127.0.0.1:1", "--topics.timeout.ms=3000");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
        assertThat(r.exit).isEqualTo(TopicsCommand.EXIT_FAILED);
        assertThat(r.err).contains("topics on 127.0.0.1:1: Kafka did not answer within 3 s")
                .contains("kafka.bootstrap.servers");
        assertThat(r.out).isEmpty();
    }

    @Test
    void invalidOrUnknownSettingsAreAUsageError() {
        Run r = run("--topics.timeout.ms=soon", "--topics.prefx=typo.");
        assertThat(r.exit).isEqualTo(TopicsCommand.EXIT_USAGE);
        assertThat(r.err).contains("topics.timeout.ms").contains("topics.prefx").contains("--help");
    }

    private record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = TopicsCommand.run(args, Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
