package io.tally.tests.replay;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.fasterxml.jackson.databind.JsonNode;
import io.tally.ingest.app.IngestSettings;
import io.tally.loadgen.LoadgenSettings;
import io.tally.schemas.Topics;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import io.tally.testsupport.truth.GroundTruthJudge;
import io.tally.testsupport.truth.GroundTruthJudge.Verdict;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One replay test's world: its own topics ({@code <prefix>transactions} with three partitions, the DLQ,
 * {@code <prefix>bucket-updates}), its own Cosmos database, the flags that point ingest-app, replay and
 * loadgen at them, a reader of what a container holds and a wait until it equals a ground truth.
 */
final class ReplayWorld implements AutoCloseable {
    final TestKafka kafka;
    final LocalSchemaRegistry registry;
    final LocalCosmos cosmos;
    final String id = UUID.randomUUID().toString().substring(0, 8);
    final String prefix;
    final Topics.Names topics;
    final String database;
    private final CosmosAsyncClient client;

    ReplayWorld(TestKafka kafka, LocalSchemaRegistry registry, LocalCosmos cosmos, String name) {
        this.kafka = kafka;
        this.registry = registry;
        this.cosmos = cosmos;
        this.prefix = name + "-" + id + "-";
        this.topics = Topics.Names.withPrefix(prefix);
        this.database = "replay-" + name + "-" + id;
        kafka.createTopics(List.of(TestKafka.topic(topics.transactions(), 3, Map.of()),
                TestKafka.topic(topics.transactionsDlq(), 1, Map.of()),
                TestKafka.topic(topics.bucketUpdates(), 3, Map.of("cleanup.policy", "compact"))));
        this.client = cosmos == null ? null : cosmos.newAsyncClient();
    }

    /** Flags every ingest-app process and replay of this world shares. */
    List<String> commonFlags(String... extra) {
        List<String> f = new ArrayList<>(List.of("--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--schema.registry.url=" + registry.url(), "--topics.prefix=" + prefix));
        if (cosmos != null) f.addAll(List.of("--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + database));
        f.addAll(List.of(extra));
        return f;
    }

    IngestSettings liveSettings(Path stateDir) {
        return IngestSettings.load(commonFlags("--ingest.application-id=live-" + id, "--sink.group-id=sink-" + id,
                "--ingest.state-dir=" + stateDir, "--ingest.commit-interval.ms=200", "--sink.metrics.port=-1",
                "--sink.flush-window.ms=100").toArray(String[]::new), Map.of());
    }

    LoadgenSettings loadgen(String topic, Path truthFile, String... extra) {
        List<String> f = new ArrayList<>(List.of("--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--schema.registry.url=" + registry.url(), "--loadgen.topic=" + topic,
                "--loadgen.ground-truth-file=" + truthFile));
        f.addAll(List.of(extra));
        return LoadgenSettings.load(f.toArray(String[]::new), Map.of());
    }

    /** pk|id -> stored entity-bucket document (not the rules record); empty while the container does not exist. */
    Map<String, JsonNode> stored(String container) {
        Map<String, JsonNode> out = new HashMap<>();
        try {
            client.getDatabase(database).getContainer(container)
                    .queryItems("SELECT * FROM c", new CosmosQueryRequestOptions(), JsonNode.class)
                    .toIterable().forEach(n -> {
                        // the deployment's rules record is not an entity bucket (docs/DESIGN.md, "Rules that change")
                        if (!n.path("pk").asText().equals("_tally")) out.put(n.get("pk").asText() + "|" + n.get("id").asText(), n);
                    });
        } catch (CosmosException e) {
            if (e.getStatusCode() != 404) throw e;
        }
        return out;
    }

    CosmosAsyncClient client() {
        return client;
    }

    CosmosAsyncContainer container(String name) {
        return client.getDatabase(database).getContainer(name);
    }

    /** Waits until container {@code name} holds exactly what {@code judge} expects; fails with the differences. */
    void awaitEqual(GroundTruthJudge judge, String name, Duration timeout) throws InterruptedException {
        Verdict v = judge.awaitEqual(container(name), timeout, Duration.ofSeconds(1));
        if (!v.equal()) throw new AssertionError("container " + name + " after " + timeout.toSeconds() + " s: " + v);
    }

    @Override
    public void close() {
        if (client != null) client.close();
    }
}
