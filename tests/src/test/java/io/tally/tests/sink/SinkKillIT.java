package io.tally.tests.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.Main;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.sink.SinkRun;
import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGKILL of a sink JVM while it writes, then a restart: every bucket ends at the newest version, and
 * no stored version ever goes backwards although the restarted sink replays everything after the last
 * commit (older versions of buckets that were already written with newer ones).
 */
@ExtendWith(LocalStackExtension.class)
class SinkKillIT {
    private static final Logger log = LoggerFactory.getLogger(SinkKillIT.class);

    @Test
    void aKilledSinkRestartsWithEveryBucketCorrectAndNoStaleVersionWinning(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        int buckets = 300;
        int rounds = 30;
        try (SinkRun run = new SinkRun(kafka, cosmos, "kill")) {
            // Commits far apart, small windows, little concurrency: the kill lands mid-batch and the restart replays a lot.
            List<String> flags = run.sinkFlags("--sink.commit-interval.ms=3000", "--sink.window.max-documents=300",
                    "--sink.max-in-flight-documents=600", "--sink.flush-window.ms=50", "--sink.concurrency.initial=1",
                    "--sink.concurrency.max=2", "--sink.bulk.chunk-size=100");
            run.produce(buckets, 1, 1);

            AtomicBoolean checking = new AtomicBoolean(true);
            List<String> regressions = new CopyOnWriteArrayList<>();
            Thread checker = new Thread(() -> run.watchVersions(checking, regressions), "version-watch");
            checker.start();
            Process first = startSink(flags, "first");
            Process second = null;
            try {
                awaitStored(run, 1, Duration.ofSeconds(30));
                // Keep producing while the sink writes; kill it half way.
                for (int r = 2; r <= rounds; r++) {
                    run.produce(buckets, r, r);
                    if (r == rounds / 2) {
                        first.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                        log.info("killed the sink JVM (pid {}) after round {}", first.pid(), r);
                    }
                    Thread.sleep(100);
                }
                int metricsPort;
                try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
                    metricsPort = free.getLocalPort();
                }
                List<String> secondFlags = new ArrayList<>(flags);
                secondFlags.add("--sink.metrics.port=" + metricsPort);
                // The restart catches up at full speed: large windows and default concurrency. Its windows close at the flush
                // window even though it is behind: a backlog window (sink.backlog.max-window.ms) would coalesce the replayed
                // versions into the newest of each bucket and write none of the stale ones this test needs to see refused.
                secondFlags.addAll(List.of("--sink.window.max-documents=10000", "--sink.max-in-flight-documents=20000",
                        "--sink.concurrency.initial=4", "--sink.concurrency.max=32", "--sink.bulk.chunk-size=1000",
                        "--sink.backlog.max-window.ms=0"));
                second = startSink(secondFlags, "second");
                run.awaitAllCorrect(Duration.ofSeconds(50));
                double stale = staleWrites(metricsPort);
                log.info("the restarted sink had {} stale writes refused by the ver condition", (long) stale);
                assertThat(stale).as("the restart replayed versions older than the stored ones, and they were refused").isPositive();
            } finally {
                checking.set(false);
                checker.join(5000);
                if (first.isAlive()) first.destroyForcibly();
                if (second != null) {
                    second.destroy(); // SIGTERM: the shutdown hook closes the sink
                    if (!second.waitFor(15, TimeUnit.SECONDS)) second.destroyForcibly();
                }
            }
            assertThat(regressions).as("a stored version went backwards").isEmpty();
        }
    }

    @Test
    void updatesThatWaitBehindAreNeitherCommittedNorLostWhenTheSinkIsKilled(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        try (SinkRun run = new SinkRun(kafka, cosmos, "behind")) {
            // History first (stamped 10 minutes ago: it waits the bound, 2 minutes); live updates of other buckets once the
            // sink runs, sent until it has written them (an update sent before the sink started would be late when read).
            run.produce(0, 200, 1, 2, System.currentTimeMillis() - Duration.ofMinutes(10).toMillis());
            List<String> flags = run.sinkFlags("--sink.backlog.max-window.ms=120000");
            Process first = startSink(flags, "behind-first");
            Process second = null;
            try {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                for (long ver = 1; run.stored().size() < 50; ver++) {
                    if (System.nanoTime() > deadline) throw new AssertionError("the live updates were not written within 60 s");
                    run.produce(1_000, 50, ver, ver, null);
                    Thread.sleep(2_000);
                }
                Thread.sleep(1_000); // a few more closes and commit intervals while the history waits
                Map<String, ?> stored = run.stored();
                assertThat(java.util.stream.IntStream.range(1_000, 1_050).mapToObj(SinkRun::key)).as("live goes first")
                        .allMatch(stored::containsKey);
                assertThat(java.util.stream.IntStream.range(0, 200).mapToObj(SinkRun::key)).as("history waits behind")
                        .noneMatch(stored::containsKey);
                assertThat(run.committed()).as("no offset is committed past an update that waits").isZero();

                first.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                List<String> secondFlags = new ArrayList<>(flags);
                secondFlags.add("--sink.backlog.max-window.ms=0");
                second = startSink(secondFlags, "behind-second");
                run.awaitAllCorrect(Duration.ofSeconds(50));
            } finally {
                if (first.isAlive()) first.destroyForcibly();
                if (second != null) {
                    second.destroy();
                    if (!second.waitFor(15, TimeUnit.SECONDS)) second.destroyForcibly();
                }
            }
        }
    }

    private static Process startSink(List<String> flags, String name) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-XX:+UseParallelGC", "-cp", System.getProperty("java.class.path")));
        for (String p : List.of("javax.net.ssl.trustStore", "javax.net.ssl.trustStorePassword", "javax.net.ssl.trustStoreType")) {
            if (System.getProperty(p) != null) cmd.add("-D" + p + "=" + System.getProperty(p));
        }
        cmd.add(Main.class.getName());
        cmd.addAll(flags);
        File logFile = new File("target/sink-kill-" + name + ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(logFile).start();
        log.info("started sink JVM {} (pid {}), log {}", name, p.pid(), logFile.getAbsolutePath());
        return p;
    }

    /** tally_sink_documents_written_total{outcome="stale"} of the sink JVM's Prometheus endpoint. */
    private static double staleWrites(int port) throws Exception {
        String body = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        return body.lines().filter(l -> l.startsWith("tally_sink_documents_written_total") && l.contains("outcome=\"stale\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    private static void awaitStored(SinkRun run, int atLeast, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (run.stored().size() < atLeast) {
            if (System.nanoTime() > deadline) throw new AssertionError("the sink wrote nothing within " + timeout);
            Thread.sleep(200);
        }
    }

}
