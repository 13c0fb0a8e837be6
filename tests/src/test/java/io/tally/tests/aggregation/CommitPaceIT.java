package io.tally.tests.aggregation;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.source.SourceTopics;
import io.tally.ingest.topology.TallyTopology;
import io.tally.loadgen.Loadgen;
import io.tally.loadgen.LoadgenSettings;
import io.tally.rules.GradeRules;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The aggregation's two commit paces (CommitPace) on the real broker, counted by Kafka Streams' own commit metric: a
 * backlog commits at the backlog interval (plus the commits that end it), an idle pipeline does not commit at all, and
 * fresh events are committed at the fresh interval. That the counts stay exact under the pace is AggregationIT's.
 */
@ExtendWith(LocalStackExtension.class)
class CommitPaceIT {
    private static final long BACKLOG_MS = 3_000, FRESH_MS = 200;

    @Test
    void aBacklogCommitsAtTheBacklogPaceAnIdlePipelineNotAtAllAndFreshEventsAtTheFreshOne(TestKafka kafka, LocalSchemaRegistry registry,
                                                                                          @TempDir Path dir) throws Exception {
        String prefix = "pace-" + UUID.randomUUID().toString().substring(0, 8) + ".";
        Topics.Names topics = AggregationIT.createTopics(kafka, prefix);
        String appId = "pace-" + UUID.randomUUID();
        produce(kafka, registry, topics, 20_000, 0, 1);
        Thread.sleep(2_500); // every record now older than twice the freshness target: a backlog

        IngestSettings settings = IngestSettings.load(AggregationIT.ingestFlags(kafka, registry, topics, appId, dir), Map.of());
        assertThat(settings.commitInterval()).isEqualTo(Duration.ofMillis(FRESH_MS));
        assertThat(settings.streamsCommitInterval()).isEqualTo(Duration.ofMillis(BACKLOG_MS));
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, topics, settings.aggregation().topology(), GradeRules.load(GradeRules.BUILTIN_DEFAULT),
                SourceTopics.shipped(topics), TallyTopology.eventDeserializer(new SchemaRegistryClient(registry.url())));
        try (KafkaStreams streams = new KafkaStreams(builder.build(), IngestApp.streamsProperties(settings, appId))) {
            long started = System.nanoTime();
            streams.start();
            AggregationIT.awaitDrained(kafka, appId, topics.transactions(), Duration.ofSeconds(120));
            double drainSeconds = (System.nanoTime() - started) / 1e9;
            double drainCommits = commits(streams);
            // One per backlog interval, and those that end each stage's part (the idle thread asks for them); at the
            // fresh pace a drain this long would have committed about five times a second.
            assertThat(drainCommits).as("commits while %.1f s of backlog drained", drainSeconds)
                    .isGreaterThan(0).isLessThanOrEqualTo(4 + Math.ceil(drainSeconds * 1000 / BACKLOG_MS));

            // Kafka Streams commits once more on its own interval: stage 5's consumer has moved past the transaction
            // marker stage 3's last commit left on the repartition topic, and it commits that position.
            Thread.sleep(BACKLOG_MS + 1_000);
            double settled = commits(streams);
            assertThat(settled - drainCommits).as("after the drain: at most the commit past the last transaction marker").isLessThanOrEqualTo(1);
            Thread.sleep(2 * BACKLOG_MS + 1_000);
            assertThat(commits(streams)).as("idle for two backlog intervals: nothing to commit, no commit").isEqualTo(settled);

            produce(kafka, registry, topics, 60, 20, 2); // 3 s of fresh events, 20 a second (another seed: new transaction ids)
            Thread.sleep(1_000);
            assertThat(commits(streams) - settled).as("fresh events for 3 s: committed at the fresh pace, not once per 3 s")
                    .isGreaterThanOrEqualTo(5);
        }
    }

    /** Kafka Streams' commits so far, over its stream threads. */
    private static double commits(KafkaStreams streams) {
        return streams.metrics().values().stream()
                .filter(m -> m.metricName().group().equals("stream-thread-metrics") && m.metricName().name().equals("commit-total"))
                .mapToDouble(m -> ((Number) m.metricValue()).doubleValue()).sum();
    }

    private static void produce(TestKafka kafka, LocalSchemaRegistry registry, Topics.Names topics, int events, int rate, long seed) throws Exception {
        Loadgen.Summary s = Loadgen.run(LoadgenSettings.load(new String[] {
                "--kafka.bootstrap.servers=" + kafka.bootstrapServers(), "--schema.registry.url=" + registry.url(),
                "--loadgen.topic=" + topics.transactions(), "--loadgen.events=" + events, "--loadgen.rate=" + rate, "--loadgen.seed=" + seed,
                "--loadgen.domain=pace", "--loadgen.customers=500", "--loadgen.ground-truth-file=none"}, Map.of()));
        assertThat(s.failed()).isZero();
    }
}
