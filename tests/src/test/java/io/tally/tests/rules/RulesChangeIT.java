package io.tally.tests.rules;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.ingest.rules.BackfillCommand;
import io.tally.ingest.rules.RulesApplyCommand;
import io.tally.ingest.rules.RulesPlanCommand;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
import io.tally.rules.state.RulesState;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.IngestNode;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.pipeline.ScaleOut;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A live pipeline of two ingest-app instances counts the default rules (v1) while events flow, then moves to v2: two
 * grades added (one qualified), one filter changed under the same name, one grade removed, one unit added to a rule.
 * The instances on v1 stop by themselves once v2 is applied; instances on v2 take over; the backfill counts the history
 * of what v2 added while events keep flowing, and a live instance is killed while it runs. Throughout, no document's
 * {@code ver} and no count of a grade v2 keeps goes down (sampled every 3 s). Then every bucket equals loadgen's ground
 * truth computed under v2 over all the input, so a kept grade was never reset nor counted twice; the removed grade is in
 * no document written since, and the record says every grade is complete.
 */
@ExtendWith(LocalStackExtension.class)
class RulesChangeIT {
    private static final Logger log = LoggerFactory.getLogger(RulesChangeIT.class);

    /** v2, as a user edits the shipped rules. */
    static String v2(String v1) {
        String out = v1
                // a unit added: spend-per-customer/month
                .replaceFirst("aggregations: \\[sum, count, min, max\\]\n    units: \\[hour, day\\]",
                        "aggregations: [sum, count, min, max]\n    units: [hour, day, month]")
                // a filter changed under the same name
                .replaceFirst("(name: spend-per-postal-code\n    entity: postalCode\n    filter: \\{field: status, in: )\\[APPROVED\\]",
                        "$1[APPROVED, DECLINED]")
                // a grade removed
                .replaceFirst("  - name: orders-per-email\n    entity: email\n    value: one\n    aggregations: \\[count\\]\n    units: \\[hour\\]\n"
                        + "    retention: P7D\n", "");
        return out + """

                  - name: orders-per-customer
                    entity: customerId
                    value: one
                    aggregations: [count]
                    units: [day]
                    retention: P35D

                  - name: declined-per-customer-sku
                    entity: customerId
                    qualifier: sku
                    filter: {field: status, in: [DECLINED]}
                    value: amount
                    aggregations: [sum, count]
                    units: [day]
                    retention: P35D
                """;
    }

    record Run(int exit, String out, String err) {}

    interface Command {
        int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err);
    }

    static Run run(Command c, List<String> args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = c.run(args.toArray(String[]::new), Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        Run r = new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        log.info("exit {}\n{}{}", exit, r.out(), r.err());
        return r;
    }

    @Test
    void gradesAddedChangedRemovedAndExtendedWhileEventsFlowEndExactlyAsV2CountsAllTheInput(
            TestKafka kafka, LocalSchemaRegistry registry, LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        String v1Text = Files.readString(Path.of("../rules/default-rules.yaml"));
        String v2Text = v2(v1Text);
        assertThat(v2Text).contains("units: [hour, day, month]").contains("in: [APPROVED, DECLINED]").doesNotContain("orders-per-email");
        Path v1 = Files.writeString(dir.resolve("v1.yaml"), v1Text);
        Path v2 = Files.writeString(dir.resolve("v2.yaml"), v2Text);
        // A short future skew keeps the seam near: it is at least the skew plus the watch interval after the apply.
        List<String> common = List.of("--ingest.max-future-skew.ms=20000", "--ingest.rules.watch-interval.ms=1000",
                "--ingest.rules.switch-margin.ms=2000", ScaleOut.FAST_FAILOVER[0], ScaleOut.FAST_FAILOVER[1]);
        try (Pipeline p = new Pipeline("rules", kafka.bootstrapServers(), registry, cosmos, dir).provisionTopics()) {
            IngestNode a1 = p.start("a1", "both", node(common, "--ingest.rules.file=" + v1));
            p.awaitReady(Pipeline.START_TIMEOUT);
            IngestNode b1 = p.start("b1", "both", node(common, "--ingest.rules.file=" + v1));
            p.awaitReady(Pipeline.START_TIMEOUT);
            String input = p.topics.transactions();
            // read-service on the same container, following the rules record every second, asked all along the move
            ReadMain read = new ReadMain(ReadSettings.load(new String[] {"--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + p.database,
                    "--read.http.port=0", "--read.rules-file=" + v1, "--read.rules-refresh.ms=1000", "--read.request-timeout.ms=15000",
                    "--read.cosmos.end-to-end-timeout.ms=10000"}, Map.of())).start();
            // loadgen spreads event times over the whole hours before now, so at 00:30 UTC "today" has no events yet: the
            // poller asks for the day of the spread's last events
            var load = p.loadgen(14_000, 200, 33, "--loadgen.rules-file=" + v2, "--loadgen.future-skew.ms=20000");
            long lastDay = java.time.Instant.ofEpochMilli(load.start().plus(load.window()).toEpochMilli() - 1).getEpochSecond() / 86_400;
            ReadPoller reads = new ReadPoller(read.port(), p, lastDay);
            // v2 keeps these grades (spend-per-customer also gains a month): never reset, never lowered during the move.
            // With the final equality to the ground truth this is the stronger check: a count is only ever raised, so one
            // that was ever above its truth (an event counted twice) would have to come down to end equal to it.
            Pipeline.VersionWatch watch = p.watchVersionsAndCounts(java.util.Set.of("spend-per-customer", "spend-per-customer-sku"));
            CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(load);
            p.awaitFlowing(Pipeline.START_TIMEOUT);
            await(() -> a1.consumed(input) + b1.consumed(input) > 3_000, Duration.ofSeconds(120), "3,000 records counted under v1");

            List<String> deployment = p.replayFlags("--ingest.application-id=" + p.appId, "--sink.group-id=" + p.sinkGroup,
                    "--ingest.max-future-skew.ms=20000",
                    "--ingest.rules.watch-interval.ms=1000", "--ingest.rules.switch-margin.ms=2000");
            Run planned = run(RulesPlanCommand::run, args(deployment, v2.toString()));
            assertThat(planned.exit()).as(planned.err()).isEqualTo(RulesPlanCommand.EXIT_CHANGES);
            assertThat(planned.out()).containsPattern("spend-per-customer/month +added")
                    .containsPattern("spend-per-postal-code/day +changed")
                    .containsPattern("orders-per-email/hour +removed")
                    .containsPattern("orders-per-customer/day +added")
                    .containsPattern("declined-per-customer-sku/day +added")
                    .contains("3 added, 1 changed, 1 removed, 3 unchanged");
            Run applied = run(RulesApplyCommand::run, args(deployment, v2.toString()));
            assertThat(applied.exit()).as(applied.err()).isEqualTo(RulesApplyCommand.EXIT_APPLIED);

            assertThat(applied.out()).contains("applied: generation 1");

            // the instances on v1 see generation 1 and stop; instances on v2 take over
            await(() -> !a1.isAlive() && !b1.isAlive(), Duration.ofSeconds(60), "the v1 instances stopping");
            assertThat(a1.logTail()).contains("rules generation 1 was applied");
            p.retire(a1);
            p.retire(b1);
            Run refused = run(RulesPlanCommand::run, args(deployment, v1.toString()));
            assertThat(refused.exit()).isEqualTo(RulesPlanCommand.EXIT_CHANGES);
            IngestNode a2 = p.start("a2", "both", node(common, "--ingest.rules.file=" + v2));
            p.awaitReady(Pipeline.START_TIMEOUT);
            IngestNode b2 = p.start("b2", "both", node(common, "--ingest.rules.file=" + v2));
            p.awaitReady(Pipeline.START_TIMEOUT);

            // the backfill, while loadgen still sends; one live instance killed while it runs
            CompletableFuture<Run> backfill = CompletableFuture.supplyAsync(() -> run(BackfillCommand::run, args(deployment,
                    "--ingest.state-dir=" + dir.resolve("state-backfill"), "--ingest.commit-interval.ms=200",
                    "--backfill.max-records-per-second=3000", "--backfill.end-margin.ms=2000", "--backfill.progress-interval.ms=2000")));
            Thread.sleep(8_000);
            b2.kill();
            log.info("b2 killed (SIGKILL) during the backfill");
            p.retire(b2);
            IngestNode b3 = p.start("b3", "both", node(common, "--ingest.rules.file=" + v2));
            Run filled = backfill.get(5, TimeUnit.MINUTES);
            assertThat(filled.exit()).as(filled.err()).isEqualTo(0);
            assertThat(filled.out()).contains("backfill of generation 1 complete: 4 grade(s)");
            Thread.sleep(3_000); // read-service's refresh, then a few answers of it

            RulesState record = new io.tally.rules.state.RulesStateStore(cosmos.newAsyncClient().getDatabase(p.database).getContainer("buckets"))
                    .read().orElseThrow().state();
            assertThat(record.generation()).isEqualTo(1);
            assertThat(record.grades()).allSatisfy(g -> assertThat(g.complete()).as(g.grade()).isTrue());
            Map<String, Long> since = new TreeMap<>();
            record.grades().forEach(g -> since.put(g.grade(), g.since()));

            Pipeline.Truth truth = produced.get(3, TimeUnit.MINUTES);
            p.awaitConverged(truth, Duration.ofSeconds(300), j -> j.acrossRulesGenerations(1, since));
            watch.close();
            reads.close();
            log.info("read-service during the move: {}", reads.statuses);
            assertThat(reads.customer).as("a customer with approved purchases on day %d, to ask read-service about", lastDay).isNotNull();
            assertThat(reads.statuses.keySet()).as("answers by status, all through the move").noneMatch(k -> k.endsWith(" 5xx"));
            assertThat(reads.statuses).as("the removed grade answered until v2 was applied, unknown after")
                    .containsKey("v1 orders-per-email 404").containsKey("moving orders-per-email 400").containsKey("v1 orders-per-customer 400");
            assertThat(reads.statuses.keySet()).as("an added grade's buckets before the seam, while its history was pending")
                    .contains("moving orders-per-customer incomplete", "moving orders-per-customer not counted yet");
            assertThat(reads.statuses.keySet()).as("the added grade answered, unmarked, while its history was pending")
                    .noneMatch(k -> k.startsWith("moving orders-per-customer 200") || k.startsWith("moving orders-per-customer 404"));
            assertThat(reads.statuses.keySet()).as("the added grade once its history is in").contains("done orders-per-customer 200")
                    .noneMatch(k -> k.startsWith("done orders-per-customer incomplete") || k.startsWith("done orders-per-customer not counted"));
            assertReadServiceAnswersTheTruth(read.port(), truth);
            read.close();
            assertThat(watch.regressions()).as("a ver or a kept grade's count went down during the move").isEmpty();
            assertThat(watch.samples()).isGreaterThan(10);
            int newer = 0;
            for (JsonNode doc : p.stored().values()) {
                if (!doc.has("ver") || doc.get("ver").asLong() >>> RulesState.VER_GENERATION_SHIFT < 1) continue;
                newer++;
                assertThat(doc.path("grades").has("orders-per-email")).as("%s, written under generation 1", doc.get("id")).isFalse();
            }
            assertThat(newer).as("documents written under generation 1").isPositive();
            Run nothing = run(RulesPlanCommand::run, args(deployment, v2.toString()));
            assertThat(nothing.exit()).isEqualTo(RulesPlanCommand.EXIT_NOTHING_TO_DO);
            Run again = run(BackfillCommand::run, args(deployment, "--ingest.state-dir=" + dir.resolve("state-backfill")));
            assertThat(again.out()).contains("nothing to backfill");
            log.info("rules change: {} records, {} expected buckets; backfill: {}", truth.summary().acknowledged(), truth.buckets().size(),
                    filled.out().strip());
            a2.close();
            b3.close();
        }
    }

    /**
     * Asks read-service every 300 ms, through the move, for one customer's day of a kept grade and an added one (the day of
     * loadgen's last events) and the current hour of the removed one, and counts the answers by the part of the move
     * read-service was in ({@link #phase}), grade and status ({@code 5xx} for any server error, {@code incomplete} for a
     * 200 saying {@code "complete": false}, {@code not counted yet} for that 404).
     */
    static final class ReadPoller implements AutoCloseable {
        final Map<String, Integer> statuses = new java.util.concurrent.ConcurrentSkipListMap<>();
        private final java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        private final Thread thread;
        private volatile String customer;

        ReadPoller(int port, Pipeline p, long day) {
            thread = new Thread(() -> {
                String pk = null;
                while (running.get()) {
                    try {
                        if (pk == null) { // one customer with approved purchases that day, chosen once
                            String id = "day|" + day;
                            pk = p.stored().values().stream().filter(d -> d.path("id").asText().equals(id)
                                    && d.path("grades").has("spend-per-customer")).findFirst().map(d -> d.path("pk").asText()).orElse(null);
                            customer = pk;
                        }
                        String phase = phase(port);
                        if (pk != null && phase != null) {
                            Map<String, Integer> answers = new java.util.HashMap<>();
                            for (String grade : List.of("spend-per-customer", "orders-per-customer", "orders-per-email")) {
                                String unit = grade.equals("orders-per-email") ? "hour" : "day";
                                long index = unit.equals("hour") ? java.time.Instant.now().getEpochSecond() / 3_600 : day;
                                var r = get(port, "/v1/buckets/" + enc(pk) + "/" + enc(grade + "|" + unit + "|" + index));
                                String status = r.statusCode() >= 500 ? "5xx"
                                        : r.statusCode() == 200 && r.body().contains("\"complete\":false") ? "incomplete"
                                        : r.statusCode() == 404 && r.body().contains("not-counted-yet") ? "not counted yet"
                                        : Integer.toString(r.statusCode());
                                answers.put(phase + " " + grade + " " + status, 1);
                            }
                            // read-service's own rules before and after: answers across a refresh are not attributed
                            if (phase.equals(phase(port))) answers.forEach((k, n) -> statuses.merge(k, n, Integer::sum));
                            answers.clear();
                        }
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        statuses.merge("error " + e.getClass().getSimpleName(), 1, Integer::sum);
                    }
                }
            }, "read-poller");
            thread.setDaemon(true);
            thread.start();
        }

        /**
         * The part of the move read-service answers in, by its own /v1/rules: v1 (generation 0), moving (generation 1, the
         * added grade's history pending), done (complete); null when it does not answer.
         */
        private static String phase(int port) throws Exception {
            var r = get(port, "/v1/rules");
            if (r.statusCode() != 200) return null;
            JsonNode rules = Pipeline.JSON.readTree(r.body());
            if (rules.path("generation").asLong() == 0) return "v1";
            for (JsonNode g : rules.path("grades")) {
                if (g.path("rule").asText().equals("orders-per-customer")) return g.path("complete").asBoolean() ? "done" : "moving";
            }
            return null;
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.interrupt();
            thread.join(10_000);
        }
    }

    private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

    static java.net.http.HttpResponse<String> get(int port, String path) throws Exception {
        return HTTP.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    static String enc(String s) {
        return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A sample of v2's buckets answered by read-service as the truth has them, complete. */
    private static void assertReadServiceAnswersTheTruth(int port, Pipeline.Truth truth) throws Exception {
        List<String> keys = new ArrayList<>(new java.util.TreeSet<>(truth.buckets().keySet()));
        int step = Math.max(1, keys.size() / 60), checked = 0;
        for (int i = 0; i < keys.size(); i += step) {
            String key = keys.get(i);
            int cut = key.indexOf('|', key.indexOf('|') + 1);
            var r = get(port, "/v1/buckets/" + enc(key.substring(0, cut)) + "/" + enc(key.substring(cut + 1)));
            assertThat(r.statusCode()).as("%s: %s", key, r.body()).isEqualTo(200);
            JsonNode answer = Pipeline.JSON.readTree(r.body()), want = truth.buckets().get(key);
            assertThat(answer.path("count").asLong()).as("count of %s", key).isEqualTo(want.path("count").asLong());
            if (want.has("sum")) {
                assertThat(new java.math.BigDecimal(answer.path("sum").asText())).as("sum of %s", key)
                        .isEqualByComparingTo(new java.math.BigDecimal(want.path("sum").asText()));
            }
            assertThat(answer.has("complete")).as("%s answered as complete", key).isFalse();
            checked++;
        }
        log.info("read-service answered {} sampled buckets of v2 as the truth has them", checked);
    }

    private static String[] node(List<String> base, String... more) {
        return args(base, more).toArray(String[]::new);
    }

    private static List<String> args(List<String> base, String... more) {
        List<String> out = new ArrayList<>(base);
        out.addAll(List.of(more));
        return out;
    }

    private static void await(BooleanSupplier done, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (done.getAsBoolean()) return;
            Thread.sleep(250);
        }
        throw new AssertionError(what + ": not within " + timeout);
    }
}
