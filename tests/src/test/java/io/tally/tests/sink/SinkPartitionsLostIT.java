package io.tally.tests.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.Main;
import io.tally.ingest.app.IngestApp;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.process.ChildJvm;
import io.tally.testsupport.sink.SinkRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sink instance frozen mid-write (SIGSTOP, as a long GC pause or a stalled VM would) past its session timeout: the
 * group gives its partitions to the other instance, and when it thaws (SIGCONT) the consumer finds them lost
 * ({@code onPartitionsLost}, not a revocation: it cannot commit any more). It must drop what it had read and abandon
 * its in-flight writes; those may still land in Cosmos after the new owner's newer ones, and the ver condition must
 * refuse them. Every bucket ends at its newest version; no stored version is ever seen going backwards.
 */
@ExtendWith(LocalStackExtension.class)
class SinkPartitionsLostIT {
    private static final Logger log = LoggerFactory.getLogger(SinkPartitionsLostIT.class);
    static final String[] FLAGS = {"--kafka.session.timeout.ms=6000", "--kafka.heartbeat.interval.ms=1000",
        "--sink.window.max-documents=300", "--sink.max-in-flight-documents=600", "--sink.flush-window.ms=50",
        "--sink.concurrency.initial=1", "--sink.concurrency.max=2", "--sink.bulk.chunk-size=100", "--sink.commit-interval.ms=3000"};

    @Test
    void aFrozenSinkThatLosesItsPartitionsNeverLetsAStaleVersionWin(TestKafka kafka, LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        int buckets = 300;
        try (SinkRun run = new SinkRun(kafka, cosmos, "lost")) {
            AtomicBoolean checking = new AtomicBoolean(true);
            List<String> regressions = new CopyOnWriteArrayList<>();
            Thread checker = new Thread(() -> run.watchVersions(checking, regressions), "version-watch");
            run.produce(buckets, 1, 1);
            Path frozenLog = dir.resolve("frozen.log");
            IngestApp other = new IngestApp(run.settings(FLAGS));
            try (ChildJvm frozen = ChildJvm.start(Main.class, run.sinkFlags(FLAGS), Map.of(), frozenLog)) {
                awaitCommitted(run, frozen, Duration.ofSeconds(60)); // alone in the group, it has written and committed
                other.start();
                checker.start();
                for (int r = 2; r <= 40; r++) {
                    run.produce(buckets, r, r);
                    if (r == 6) {
                        signal("STOP", frozen.pid());
                        log.info("froze the sink JVM (pid {}) after round {}", frozen.pid(), r);
                    }
                    if (r == 30) {
                        signal("CONT", frozen.pid());
                        log.info("thawed the sink JVM after round {}", r);
                    }
                    Thread.sleep(500); // rounds 6..30 span 12 s: twice the session timeout
                }
                awaitLogLine(frozen, frozenLog, "lost; their in-flight writes are abandoned", Duration.ofSeconds(60));
                run.awaitAllCorrect(Duration.ofSeconds(60));
                assertThat(frozen.isAlive()).as("the thawed sink lives on\n%s", frozen.logTail()).isTrue();
            } finally {
                checking.set(false);
                checker.join(5000);
                other.close();
            }
            assertThat(regressions).as("a stored version went backwards").isEmpty();
        }
    }

    private static void signal(String name, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -%s %d", name, pid).isZero();
    }

    private static void awaitCommitted(SinkRun run, ChildJvm jvm, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (run.committed() == 0) {
            assertThat(jvm.isAlive()).as("the sink JVM exited\n%s", jvm.logTail()).isTrue();
            assertThat(System.nanoTime()).as("nothing committed within %d s\n%s", timeout.toSeconds(), jvm.logTail()).isLessThan(deadline);
            Thread.sleep(200);
        }
    }

    private static void awaitLogLine(ChildJvm jvm, Path log, String text, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readString(log).contains(text)) return;
            assertThat(jvm.isAlive()).as("the sink JVM exited\n%s", jvm.logTail()).isTrue();
            Thread.sleep(200);
        }
        throw new AssertionError("no log line with '" + text + "' within " + timeout.toSeconds() + " s\n" + jvm.logTail());
    }
}
