package io.tally.tests.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.search.Search;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.sink.SinkMetrics;
import io.tally.model.Aggregate;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import io.tally.model.TimeUnit;
import io.tally.schemas.DeadLetters;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.CosmosControl.Fault;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.sink.SinkRun;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink (in-process IngestApp, role sink) against the real broker and the local Cosmos endpoint
 * while the endpoint throttles, fails and goes away. Each test ends with every bucket holding the
 * newest version produced. Fault rules are scoped to the test's own database and removed in finally.
 */
@ExtendWith(LocalStackExtension.class)
class SinkFaultsIT {
    private static final Logger log = LoggerFactory.getLogger(SinkFaultsIT.class);

    private static double counter(SinkMetrics m, String name) {
        return Search.in(m.registry()).name(name).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private static double summaryTotal(SinkMetrics m, String name) {
        return Search.in(m.registry()).name(name).summaries().stream().mapToDouble(s -> s.totalAmount()).sum();
    }

    @Test
    void aBudgetAtHalfTheDemandThrottlesButEverythingArrives(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        CosmosControl control = cosmos.control();
        int buckets = 4000;
        try (SinkRun run = new SinkRun(kafka, cosmos, "storm"); IngestApp sink = new IngestApp(run.settings())) {
            // Phase A, unthrottled: the sink's natural document rate on this machine.
            run.produce(buckets, 1, 1);
            long t0 = System.nanoTime();
            sink.start();
            run.awaitAllCorrect(Duration.ofSeconds(40));
            double docsPerSecond = buckets / ((System.nanoTime() - t0) / 1e9);
            // Phase B: one conditional patch per bucket (10.29 RU each on this endpoint) under half that demand.
            double demand = docsPerSecond * 10.29;
            double budget = Math.max(1500, demand / 2);
            control.setThroughput(run.database, "buckets", budget);
            try {
                SinkMetrics m = sink.sink().metrics();
                double ru0 = counter(m, "tally.sink.request.units");
                double throttled0 = counter(m, "tally.sink.throttled");
                double ops0 = summaryTotal(m, "tally.sink.bulk.call.operations");
                long t1 = System.nanoTime();
                run.produce(buckets, 2, 2);
                run.awaitAllCorrect(Duration.ofSeconds(45));
                double seconds = (System.nanoTime() - t1) / 1e9;
                double ru = counter(m, "tally.sink.request.units") - ru0;
                double throttled = counter(m, "tally.sink.throttled") - throttled0;
                double ops = summaryTotal(m, "tally.sink.bulk.call.operations") - ops0;
                log.info("429 storm: demand ~{} RU/s ({} docs/s unthrottled), budget {} RU/s; phase B {} s, {} RU charged = {} RU/s "
                                + "= {}% of the budget; {} of {} operation attempts answered 429 ({}%); concurrency limit now {}",
                        Math.round(demand), Math.round(docsPerSecond), Math.round(budget), String.format("%.1f", seconds), Math.round(ru),
                        Math.round(ru / seconds), Math.round(100 * ru / seconds / budget), Math.round(throttled), Math.round(ops),
                        Math.round(100 * throttled / Math.max(1, ops)), sink.sink().writer().concurrencyLimit());
                assertThat(throttled).as("the budget pushed back").isPositive();
            } finally {
                control.setThroughput(run.database, "buckets", null);
            }
        }
    }

    @Test
    void theSinksOwnRuBudgetKeepsItsRateUnderTheBudget(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        int budget = 3000;
        try (SinkRun run = new SinkRun(kafka, cosmos, "budget");
             IngestApp sink = new IngestApp(run.settings("--sink.ru-budget=" + budget))) {
            run.produce(1500, 1, 1);
            sink.start();
            run.awaitAllCorrect(Duration.ofSeconds(30));
            SinkMetrics m = sink.sink().metrics();
            double ru0 = counter(m, "tally.sink.request.units");
            long t0 = System.nanoTime();
            run.produce(1500, 2, 2); // 1,500 conditional patches, ~15,400 RU: about five seconds at the budget
            run.awaitAllCorrect(Duration.ofSeconds(40));
            double seconds = (System.nanoTime() - t0) / 1e9;
            double ru = counter(m, "tally.sink.request.units") - ru0;
            log.info("RU budget {} RU/s (throughput control group): {} RU in {} s = {} RU/s; {} operations throttled client-side",
                    budget, Math.round(ru), String.format("%.1f", seconds), Math.round(ru / seconds),
                    Math.round(counter(m, "tally.sink.throttled")));
            // The SDK meters in ~1 s cycles and admits the request that crosses the line: allow one cycle of overdraft.
            assertThat(ru).isLessThanOrEqualTo(budget * (seconds + 1) * 1.2);
        }
    }

    @Test
    void aWindowLargerThanWhatMayBeInFlightIsWrittenInParts(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        int buckets = 3000, cap = 300;
        try (SinkRun run = new SinkRun(kafka, cosmos, "parts");
             IngestApp sink = new IngestApp(run.settings("--sink.window.max-documents=5000", "--sink.max-in-flight-documents=" + cap,
                     "--sink.bulk.chunk-size=100", "--sink.flush-window.ms=3000"))) {
            run.produce(buckets, 1, 1); // a backlog: the first window takes all of it, ten times the in-flight cap
            sink.start();
            SinkMetrics m = sink.sink().metrics();
            int peak = run.highestWhileAwaitingAllCorrect(
                    () -> (int) m.registry().get("tally.sink.in.flight.documents").gauge().value(), Duration.ofSeconds(60));
            log.info("window of {} documents, in-flight cap {}: peak in flight {}, {} operations", buckets, cap, peak,
                    summaryTotal(m, "tally.sink.bulk.call.operations"));
            assertThat(peak).as("documents in flight at most").isPositive().isLessThanOrEqualTo(cap);
        }
    }

    @Test
    void theSinkAsksForNoDocumentBack(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        CosmosControl control = cosmos.control();
        CosmosControl.Stats before = control.stats();
        try (SinkRun run = new SinkRun(kafka, cosmos, "nobody"); IngestApp sink = new IngestApp(run.settings())) {
            run.produce(300, 1, 1); // creates
            sink.start();
            run.awaitAllCorrect(Duration.ofSeconds(30));
            run.produce(300, 2, 2); // conditional patches
            run.awaitAllCorrect(Duration.ofSeconds(30));
        }
        CosmosControl.Stats after = control.stats();
        assertThat(after.batchOperations() - before.batchOperations()).as("bulk operations").isGreaterThanOrEqualTo(600);
        assertThat(after.batchOperationsWithBody() - before.batchOperationsWithBody()).as("results that echoed their document").isZero();
    }

    @Test
    void burstsOf503_408_410And449EndWithEveryBucketCorrect(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        CosmosControl control = cosmos.control();
        List<String> rules = new ArrayList<>();
        try (SinkRun run = new SinkRun(kafka, cosmos, "bursts"); IngestApp sink = new IngestApp(run.settings())) {
            String scope = "/dbs/" + run.database + "/colls/buckets";
            run.produce(600, 1, 2);
            rules.add(control.injectFault(Fault.status(503).kind("batch").pathPrefix(scope).count(3)));
            rules.add(control.injectFault(Fault.status(408).kind("batch").pathPrefix(scope).count(3)));
            rules.add(control.injectFault(Fault.status(410).subStatus(0).kind("batch").pathPrefix(scope).count(2)));
            rules.add(control.injectFault(Fault.status(449).retryAfterMs(20).kind("batch").pathPrefix(scope).count(2)));
            sink.start();
            run.awaitAllCorrect(Duration.ofSeconds(40));
            for (String r : rules) assertThat(control.faultHits(r)).as("rule %s was hit", r).isPositive();
            // A second round while the sink is warm.
            rules.add(control.injectFault(Fault.status(503).kind("batch").pathPrefix(scope).count(4)));
            rules.add(control.injectFault(Fault.status(408).kind("batch").pathPrefix(scope).count(2)));
            run.produce(600, 3, 3);
            run.awaitAllCorrect(Duration.ofSeconds(30));
            SinkMetrics m = sink.sink().metrics();
            String retries = Search.in(m.registry()).name("tally.sink.retries").counters().stream()
                    .map(c -> c.getId().getTag("status") + "=" + (long) c.count()).collect(Collectors.joining(", "));
            log.info("bursts: retries by status {}", retries);
            assertThat(retries).contains("503=", "408=");
        } finally {
            rules.forEach(control::removeFault);
        }
    }

    /**
     * A Cosmos outage, shortened from the 60 s to 15 s to keep the suite within its time
     * budget: with sink.retry.max-elapsed.ms=4000 the writes pass their retry bound after ~4 s, so the
     * rest of the outage exercises exactly what a 60 s one would (stalled, paused, no commits past the
     * stalled writes, retried every max backoff) — only for less long.
     */
    @Test
    void anOutageStallsTheSinkWithoutLosingOrCommittingAnythingAndItResumes(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        CosmosControl control = cosmos.control();
        String rule = null;
        try (SinkRun run = new SinkRun(kafka, cosmos, "outage");
             IngestApp sink = new IngestApp(run.settings("--sink.retry.max-elapsed.ms=4000", "--sink.retry.max-backoff.ms=1000",
                     "--sink.retry.max-attempts=6"))) {
            run.produce(400, 1, 1);
            sink.start();
            run.awaitAllCorrect(Duration.ofSeconds(30));
            Thread.sleep(500); // one more commit interval
            long committedBefore = run.committed();

            rule = control.injectFault(Fault.status(503).kind("batch").pathPrefix("/dbs/" + run.database + "/colls/buckets")
                    .duration(Duration.ofSeconds(15)));
            run.produce(400, 2, 3);
            boolean stalled = false;
            long outageEnd = System.nanoTime() + Duration.ofSeconds(14).toNanos();
            while (System.nanoTime() < outageEnd) {
                stalled |= sink.sink().writer().stalled();
                assertThat(run.committed()).as("no commit while every write fails").isEqualTo(committedBefore);
                Thread.sleep(500);
            }
            assertThat(stalled).as("the writes passed their retry bound and the sink stalled").isTrue();
            run.awaitAllCorrect(Duration.ofSeconds(30));
            // A bucket's older version may still wait for its next retry (every sink.retry.max-backoff.ms) after its newer
            // one went through; that retry is refused as stale, and only then is nothing stalled.
            long resumeBy = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (sink.sink().writer().stalled() && System.nanoTime() < resumeBy) Thread.sleep(50);
            assertThat(sink.sink().writer().stalled()).as("resumed within a retry of the outage's end").isFalse();
        } finally {
            if (rule != null) control.removeFault(rule);
        }
    }

    @Test
    void aPoisonDocumentGoesToTheDlqAndEverythingElseIsWritten(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        try (SinkRun run = new SinkRun(kafka, cosmos, "poison"); IngestApp sink = new IngestApp(run.settings())) {
            run.produce(200, 1, 1);
            EntityBucket bad = EntityBucket.main("sinkit|bad", TimeUnit.HOUR, 1, "2026-11-21T00:00:00Z");
            bad.addGrade("spend", new Aggregate(BigDecimal.ONE, 1, BigDecimal.ONE, BigDecimal.ONE), 0); // ttl 0: Cosmos answers 400
            bad.stamp("2026-11-21T00:00:00Z");
            run.sendRaw("sinkit|bad|hour|1", EntityBucketJson.write(bad));
            run.sendRaw("sinkit|junk|hour|1", "{not json".getBytes(StandardCharsets.UTF_8));
            run.produce(200, 2, 2);
            sink.start();
            run.awaitAllCorrect(Duration.ofSeconds(40));

            List<ConsumerRecord<String, byte[]>> dead = run.deadLetters(2, Duration.ofSeconds(20));
            assertThat(dead).extracting(ConsumerRecord::key).containsExactlyInAnyOrder("sinkit|bad|hour|1", "sinkit|junk|hour|1");
            Map<String, ConsumerRecord<String, byte[]>> byKey = dead.stream().collect(Collectors.toMap(ConsumerRecord::key, r -> r));
            ConsumerRecord<String, byte[]> refused = byKey.get("sinkit|bad|hour|1");
            assertThat(header(refused, DeadLetters.REASON)).isEqualTo(DeadLetters.Reason.COSMOS_REFUSED.name());
            assertThat(header(refused, DeadLetters.COSMOS_STATUS)).isEqualTo("400");
            assertThat(header(refused, DeadLetters.MESSAGE)).startsWith("Cosmos answered 400/");
            ConsumerRecord<String, byte[]> junk = byKey.get("sinkit|junk|hour|1");
            assertThat(header(junk, DeadLetters.REASON)).isEqualTo(DeadLetters.Reason.DECODE_FAILED.name());
            assertThat(junk.headers().lastHeader(DeadLetters.COSMOS_STATUS)).as("Cosmos never saw it").isNull();
            assertThat(junk.value()).isEqualTo("{not json".getBytes(StandardCharsets.UTF_8));
            assertThat(dead).allSatisfy(r -> {
                assertThat(header(r, DeadLetters.SOURCE_TOPIC)).isEqualTo(run.topic);
                assertThat(header(r, DeadLetters.SOURCE_OFFSET)).matches("[0-9]+");
                assertThat(header(r, DeadLetters.TIME)).isNotBlank();
            });
            assertThat(run.stored()).doesNotContainKey("sinkit|bad|hour|1");
        }
    }

    private static String header(ConsumerRecord<?, ?> r, String name) {
        return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }
}
