package io.tally.tests.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.IngestNode;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.pipeline.ScaleOut;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two ingest-app instances (both roles each) share one application id and sink group, two read-service
 * instances serve one Cosmos container. Both ingest instances take input partitions and write
 * documents; one is killed with SIGKILL mid-run and the other takes its partitions over. Everything
 * converges to the ground truth with no stored version going backwards, and both read services
 * answer the same documents.
 */
@ExtendWith(LocalStackExtension.class)
class ScaleOutIT {
    private static final Logger log = LoggerFactory.getLogger(ScaleOutIT.class);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void twoInstancesShareTheWorkAndOneTakesOverWhenTheOtherIsKilled(TestKafka kafka, LocalSchemaRegistry registry,
                                                                      LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        try (Pipeline p = new Pipeline("scale", kafka.bootstrapServers(), registry, cosmos, dir).provisionTopics()) {
            IngestNode a = p.start("node-a", "both", ScaleOut.FAST_FAILOVER);
            // One at a time: instances starting together race to create the Cosmos database, and the loser exits (409).
            p.awaitReady(Pipeline.START_TIMEOUT);
            IngestNode b = p.start("node-b", "both", ScaleOut.FAST_FAILOVER);
            String input = p.topics.transactions();
            try (Pipeline.VersionWatch watch = p.watchVersions()) {
                p.awaitReady(Pipeline.START_TIMEOUT);
                CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(p.loadgen(16_000, 300, 101));
                p.awaitFlowing(Pipeline.START_TIMEOUT);

                // Work is shared: each instance owns input partitions, has consumed input and written documents.
                Map<String, Set<Integer>> shared = awaitAssignment(p, input, m -> m.size() == 2
                        && m.values().stream().mapToInt(Set::size).sum() == 6, Duration.ofSeconds(60));
                // Mid-run: about a third of the input consumed, shared by both.
                awaitTrue(() -> a.consumed(input) > 0 && b.consumed(input) > 0 && a.consumed(input) + b.consumed(input) > 5_000
                        && a.metric("tally_sink_updates_consumed_total") > 0 && b.metric("tally_sink_updates_consumed_total") > 0,
                        Duration.ofSeconds(120), "both instances consuming input and bucket updates");
                double aBefore = a.consumed(input), bBefore = b.consumed(input);
                log.info("scale-out, both running: input partitions {}; input consumed a={} b={}; bucket updates consumed a={} b={}",
                        shared, (long) aBefore, (long) bBefore, (long) a.metric("tally_sink_updates_consumed_total"),
                        (long) b.metric("tally_sink_updates_consumed_total"));

                b.kill();
                long killedAt = System.nanoTime();
                Map<String, Set<Integer>> after = awaitAssignment(p, input,
                        m -> m.size() == 1 && m.getOrDefault("node-a", Set.of()).size() == 6, Duration.ofSeconds(90));
                double takeover = (System.nanoTime() - killedAt) / 1e9;
                log.info("node-b killed (SIGKILL); node-a owns input partitions {} after {} s", after, String.format("%.1f", takeover));

                Pipeline.Truth truth = produced.get(3, TimeUnit.MINUTES);
                truth.assertExercisesEverything();
                p.awaitConverged(truth, Duration.ofSeconds(240));
                double aTotal = a.consumed(input);
                log.info("scale-out: {} records, {} buckets; input consumed by a {} (before the kill {}), by b {} before its kill",
                        truth.summary().acknowledged(), truth.buckets().size(), (long) aTotal, (long) aBefore, (long) bBefore);
                assertThat(aTotal).as("the survivor carried on with the killed instance's partitions").isGreaterThan(aBefore);
                assertThat(watch.regressions()).as("a stored version went backwards").isEmpty();
                assertThat(watch.samples()).isPositive();

                assertReadServicesAgree(p, cosmos, truth);
            }
        }
    }

    /** Both read-service instances answer the same document for a sample of buckets, and it carries the truth. */
    private static void assertReadServicesAgree(Pipeline p, LocalCosmos cosmos, Pipeline.Truth truth) throws Exception {
        // Generous timeouts: this checks what is answered, not how fast (a shared machine can be very slow).
        String[] flags = {"--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + p.database, "--read.http.port=0",
                "--read.request-timeout.ms=15000", "--read.cosmos.end-to-end-timeout.ms=10000"};
        try (ReadMain r1 = new ReadMain(ReadSettings.load(flags, Map.of())).start();
             ReadMain r2 = new ReadMain(ReadSettings.load(flags, Map.of())).start()) {
            List<String> keys = new ArrayList<>(new java.util.TreeSet<>(truth.buckets().keySet()));
            int step = Math.max(1, keys.size() / 50);
            int checked = 0;
            for (int i = 0; i < keys.size(); i += step) {
                String key = keys.get(i);
                int cut = key.indexOf('|', key.indexOf('|') + 1); // pk = domain|entity, id = the rest
                String pk = key.substring(0, cut), id = key.substring(cut + 1);
                JsonNode one = get(r1.port(), pk, id), two = get(r2.port(), pk, id);
                assertThat(one).as("read-service 1 and 2 on %s", key).isEqualTo(two);
                JsonNode want = truth.buckets().get(key);
                if (want.has("sum")) {
                    assertThat(new BigDecimal(one.get("sum").asText())).as("sum of %s", key)
                            .isEqualByComparingTo(new BigDecimal(want.get("sum").asText()));
                }
                checked++;
            }
            log.info("both read-service instances answered the same {} sampled documents", checked);
        }
    }

    private static JsonNode get(int port, String pk, String id) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + port + "/v1/buckets/" + URLEncoder.encode(pk, StandardCharsets.UTF_8) + "/"
                + URLEncoder.encode(id, StandardCharsets.UTF_8));
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
        for (int attempt = 1; attempt < 5 && (r.statusCode() == 503 || r.statusCode() == 504); attempt++) {
            Thread.sleep(500); // shed or timed out under load: ask again, as a client following Retry-After would
            r = HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
        }
        assertThat(r.statusCode()).as("GET %s %s: %s", pk, id, r.body()).isEqualTo(200);
        return Pipeline.JSON.readTree(r.body());
    }

    private static Map<String, Set<Integer>> awaitAssignment(Pipeline p, String topic,
                                                             java.util.function.Predicate<Map<String, Set<Integer>>> done,
                                                             Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<String, Set<Integer>> last = Map.of();
        while (System.nanoTime() < deadline) {
            try {
                last = ScaleOut.assignment(p, p.appId, topic);
                if (done.test(last)) return last;
            } catch (RuntimeException e) {
                // a rebalance in progress
            }
            Thread.sleep(250);
        }
        throw new AssertionError("input partitions not assigned as expected within " + timeout + ": " + last);
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("not within " + timeout + ": " + what);
            Thread.sleep(500);
        }
    }
}
