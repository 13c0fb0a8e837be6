package io.tally.benchmarks.cosmos;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosAsyncDatabase;
import com.azure.cosmos.ThrottlingRetryOptions;
import com.azure.cosmos.models.CosmosBulkOperationResponse;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.SqlParameter;
import com.azure.cosmos.models.SqlQuerySpec;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.benchmarks.BenchRun;
import io.tally.model.Aggregate;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import io.tally.model.TimeUnit;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.math.BigDecimal;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.stream.IntStream;
import reactor.core.publisher.Flux;

/**
 * Benchmark of the local Cosmos endpoint through the Java SDK (not part of the test suite):
 *
 * <ol>
 *   <li>bulk upsert of 100,000 small bucket documents: items/s, CPU of the node server and of this JVM;
 *   <li>a single-partition query in a container of 200,000 documents: latency;
 *   <li>a bulk load of 50,000 documents into a container with a 1,000 RU/s budget: completes with
 *       every item, 429 count, achieved RU/s.
 * </ol>
 *
 * Run from the repository root (starts a private endpoint unless TALLY_COSMOS_ENDPOINT is set):
 * {@code ./tally bench local-cosmos} (add {@code quick} for a tenth of the sizes). Writes docs/benchmarks/local-cosmos.md.
 */
public final class LocalCosmosBench {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

    private final StringBuilder report = new StringBuilder();
    private final LocalCosmos cosmos;
    private final CosmosControl control;
    private final long serverPid;

    private LocalCosmosBench(LocalCosmos cosmos) {
        this.cosmos = cosmos;
        this.control = cosmos.control();
        this.serverPid = control.health().path("pid").asLong();
    }

    public static void main(String[] args) throws Exception {
        BenchRun.begin("local-cosmos");
        boolean quick = Arrays.asList(args).contains("quick");
        int bulkItems = quick ? 10_000 : 100_000;
        int queryContainerItems = quick ? 20_000 : 200_000;
        int throttledItems = quick ? 5_000 : 50_000;
        double budget = 1_000;

        quietSdkLogging();
        LocalCosmos cosmos = System.getenv("TALLY_COSMOS_ENDPOINT") != null ? LocalCosmos.get() : LocalCosmos.startPrivate();
        LocalCosmosBench bench = new LocalCosmosBench(cosmos);
        BenchRun.begin("local-cosmos").cosmos(cosmos.control());
        CosmosAsyncClient client = cosmos.clientBuilder()
                // The SDK's default gives up on a throttled operation after 9 retries / 30 s; a loader
                // that must finish under a budget waits as long as it takes.
                .throttlingRetryOptions(new ThrottlingRetryOptions()
                        .setMaxRetryAttemptsOnThrottledRequests(Integer.MAX_VALUE)
                        .setMaxRetryWaitTime(Duration.ofMinutes(30)))
                .buildAsyncClient();
        String dbId = "bench-" + UUID.randomUUID().toString().substring(0, 8);
        client.createDatabaseIfNotExists(dbId).block();
        CosmosAsyncDatabase db = client.getDatabase(dbId);
        try {
            bench.header(quick);
            CosmosAsyncContainer buckets = bench.container(db, "buckets");
            bench.bulkUpsert(buckets, 0, bulkItems, "1. Bulk upsert of %,d small items".formatted(bulkItems));
            bench.bulkUpsert(buckets, bulkItems, queryContainerItems,
                    "1b. Upsert of %,d more items (fills the container for test 2)".formatted(queryContainerItems - bulkItems));
            bench.singlePartitionQuery(buckets, queryContainerItems);
            CosmosAsyncContainer throttled = bench.container(db, "throttled");
            bench.throttledBulkLoad(throttled, dbId, throttledItems, budget);
        } finally {
            db.delete().block();
            client.close();
        }
        Path out = LocalCosmos.repoRoot().resolve("docs/benchmarks/local-cosmos.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, bench.report.append('\n').append(BenchRun.begin("local-cosmos").markdown()).toString());
        System.out.println(bench.report);
        System.out.println("written to " + out);
        System.exit(0);
    }

    private CosmosAsyncContainer container(CosmosAsyncDatabase db, String id) {
        db.createContainerIfNotExists(new CosmosContainerProperties(id, "/pk")).block();
        return db.getContainer(id);
    }

    private void header(boolean quick) {
        line("# Local Cosmos endpoint benchmark");
        line("");
        line("Generated by `benchmarks/src/main/java/io/tally/benchmarks/cosmos/LocalCosmosBench.java` on %s%s.",
                Instant.now().toString().substring(0, 16).replace('T', ' '), quick ? " (quick mode: sizes / 10)" : "");
        line("Machine: %d cores, Java %s, endpoint %s (node pid %d). Client: azure-cosmos 4.81.0, Gateway mode,",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), cosmos.endpoint(), serverPid);
        line("`executeBulkOperations` with default options, client and server on the same machine.");
        line("Command: `./tally bench local-cosmos%s`", quick ? " quick" : "");
        line("");
    }

    /** Small entity bucket documents as the sink writes them: 1,000 entities (partitions), one grade, one bucket per id. */
    private static ObjectNode bucket(int i) {
        EntityBucket d = EntityBucket.main("card|" + i % 1_000, TimeUnit.HOUR, 480_000 + i / 1_000, "2024-10-01T00:00:00Z");
        d.addGrade("amount", new Aggregate(BigDecimal.valueOf(i * 15L, 1), 1 + i % 5, BigDecimal.ONE, BigDecimal.valueOf(9)), 3_024_000);
        d.stamp("2024-10-01T01:00:00Z");
        return EntityBucketJson.tree(d);
    }

    private static List<CosmosItemOperation> upserts(int from, int to) {
        return IntStream.range(from, to)
                .mapToObj(i -> {
                    ObjectNode d = bucket(i);
                    return CosmosBulkOperations.getUpsertItemOperation(d, new PartitionKey(d.get("pk").asText()));
                })
                .toList();
    }

    /** Runs the operations; resubmits any that failed (e.g. throttled beyond the SDK's retries). */
    private static long[] runBulk(CosmosAsyncContainer c, List<CosmosItemOperation> ops) {
        long failures = 0;
        List<CosmosItemOperation> pending = ops;
        for (int round = 0; !pending.isEmpty(); round++) {
            if (round == 10) throw new IllegalStateException(pending.size() + " operations still failing after 10 rounds");
            List<CosmosItemOperation> failed = new ArrayList<>();
            for (CosmosBulkOperationResponse<Object> r : c.executeBulkOperations(Flux.fromIterable(pending)).collectList().block()) {
                if (r.getResponse() == null || !r.getResponse().isSuccessStatusCode()) failed.add(r.getOperation());
            }
            failures += failed.size();
            pending = failed;
        }
        return new long[] {failures};
    }

    private void bulkUpsert(CosmosAsyncContainer c, int from, int to, String title) {
        List<CosmosItemOperation> ops = upserts(from, to);
        control.resetStats();
        long serverTicks0 = serverCpuTicks();
        long clientCpu0 = clientCpuNanos();
        long t0 = System.nanoTime();
        long[] failed = runBulk(c, ops);
        double seconds = (System.nanoTime() - t0) / 1e9;
        double serverCpu = (serverCpuTicks() - serverTicks0) / (double) CLOCK_TICKS_PER_SECOND;
        double clientCpu = (clientCpuNanos() - clientCpu0) / 1e9;
        CosmosControl.Stats stats = control.stats();
        line("## %s", title);
        line("");
        line("| items | wall s | items/s | server CPU (node) | client CPU (JVM) | RU charged | batch requests | resubmitted |");
        line("|---|---|---|---|---|---|---|---|");
        line("| %,d | %.1f | **%,.0f** | %.1f s = %.0f%% of a core | %.1f s = %.0f%% | %,.0f | %,d | %d |",
                ops.size(), seconds, ops.size() / seconds, serverCpu, 100 * serverCpu / seconds, clientCpu, 100 * clientCpu / seconds,
                stats.requestCharge(), stats.count("batch"), failed[0]);
        line("");
    }

    private void singlePartitionQuery(CosmosAsyncContainer c, int containerItems) {
        long count = c.queryItems("SELECT VALUE COUNT(1) FROM c", new CosmosQueryRequestOptions(), Long.class).blockFirst();
        SqlQuerySpec q = new SqlQuerySpec("SELECT * FROM c WHERE c.pk = @pk AND c.unit = 'hour' ORDER BY c.id DESC",
                List.of(new SqlParameter("@pk", "card|42")));
        CosmosQueryRequestOptions options = new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey("card|42"));
        int runs = 200;
        long[] micros = new long[runs];
        int rows = 0;
        double charge = 0;
        for (int i = 0; i < runs + 20; i++) { // 20 warm-up runs
            long t0 = System.nanoTime();
            List<JsonNode> result = c.queryItems(q, options, JsonNode.class).collectList().block();
            long us = (System.nanoTime() - t0) / 1000;
            if (i >= 20) micros[i - 20] = us;
            rows = result.size();
        }
        charge = c.queryItems(q, options, JsonNode.class).byPage().blockFirst().getRequestCharge();
        Arrays.sort(micros);
        long t0 = System.nanoTime();
        long crossCount = c.queryItems("SELECT VALUE COUNT(1) FROM c WHERE c.ver > 2", new CosmosQueryRequestOptions(), Long.class)
                .blockFirst();
        double crossMs = (System.nanoTime() - t0) / 1e6;
        line("## 2. Single-partition query in a container of %,d items", count);
        line("");
        line("`%s` (partition card|42: %d rows), %d runs after 20 warm-up runs, end to end through the SDK", q.getQueryText(), rows, runs);
        line("(query plan request + query request each time).");
        line("");
        line("| p50 ms | p90 ms | p99 ms | max ms | RU per query |");
        line("|---|---|---|---|---|");
        line("| **%.2f** | %.2f | %.2f | %.2f | %.2f |", micros[runs / 2] / 1000.0, micros[runs * 9 / 10] / 1000.0,
                micros[runs * 99 / 100] / 1000.0, micros[runs - 1] / 1000.0, charge);
        line("");
        line("For comparison, a cross-partition `SELECT VALUE COUNT(1) FROM c WHERE c.ver > 2` over all %,d items: %.0f ms (count %,d).",
                count, crossMs, crossCount);
        line("");
        if (count != containerItems) throw new IllegalStateException("expected " + containerItems + " items, found " + count);
    }

    private void throttledBulkLoad(CosmosAsyncContainer c, String dbId, int items, double budget) {
        control.setThroughput(dbId, "throttled", budget);
        control.resetStats();
        long t0 = System.nanoTime();
        long[] resubmitted = runBulk(c, upserts(0, items));
        double seconds = (System.nanoTime() - t0) / 1e9;
        CosmosControl.Stats stats = control.stats();
        control.setThroughput(dbId, "throttled", null);
        long present = c.queryItems("SELECT VALUE COUNT(1) FROM c", new CosmosQueryRequestOptions(), Long.class).blockFirst();
        line("## 3. Bulk load of %,d items under a %,.0f RU/s budget", items, budget);
        line("");
        line("| items present | wall s | RU charged | achieved RU/s | 429 answers (requests + operations in batches) | batch requests | resubmitted |");
        line("|---|---|---|---|---|---|---|");
        line("| **%,d / %,d** | %.1f | %,.0f | **%,.0f** | %,d + %,d | %,d | %d |", present, items, seconds, stats.requestCharge(),
                stats.requestCharge() / seconds, stats.status429(), stats.batchOperationsThrottled(), stats.count("batch"), resubmitted[0]);
        line("");
        if (present != items) throw new IllegalStateException("only " + present + " of " + items + " items are present");
    }

    private long serverCpuTicks() {
        try {
            String stat = Files.readString(Path.of("/proc/" + serverPid + "/stat"));
            // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return 0; // not on Linux or another machine's endpoint: report 0
        }
    }

    private static long clientCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static void quietSdkLogging() {
        for (String name : new String[] {"com.azure", "io.netty", "reactor"}) {
            if (org.slf4j.LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger logger) {
                logger.setLevel(ch.qos.logback.classic.Level.ERROR);
            }
        }
    }

    private void line(String format, Object... args) {
        report.append(String.format(Locale.ROOT, format, args)).append('\n');
    }
}
