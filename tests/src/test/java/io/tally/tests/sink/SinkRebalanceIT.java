package io.tally.tests.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.app.IngestApp;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.sink.SinkRun;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Partitions move between two sink instances of one group while both write: a second instance joins
 * (every partition is revoked and reassigned), then the first one leaves. In-flight writes are finished
 * or abandoned at each revocation; every bucket ends at its newest version and no stored version is ever
 * seen going backwards.
 */
@ExtendWith(LocalStackExtension.class)
class SinkRebalanceIT {

    @Test
    void partitionsMovingBetweenInstancesNeverLetAStaleVersionWin(TestKafka kafka, LocalCosmos cosmos) throws Exception {
        int buckets = 300;
        try (SinkRun run = new SinkRun(kafka, cosmos, "rebalance")) {
            String[] flags = {"--sink.window.max-documents=300", "--sink.max-in-flight-documents=600", "--sink.flush-window.ms=50",
                    "--sink.concurrency.initial=1", "--sink.concurrency.max=2", "--sink.bulk.chunk-size=100"};
            AtomicBoolean checking = new AtomicBoolean(true);
            List<String> regressions = new CopyOnWriteArrayList<>();
            Thread checker = new Thread(() -> run.watchVersions(checking, regressions), "version-watch");
            run.produce(buckets, 1, 1);
            IngestApp first = new IngestApp(run.settings(flags));
            IngestApp second = new IngestApp(run.settings(flags));
            try {
                first.start();
                checker.start();
                for (int r = 2; r <= 24; r++) {
                    run.produce(buckets, r, r);
                    if (r == 8) { // joins: every partition is revoked from the first, then shared
                        second.start();
                        awaitMembers(run, 2);
                    }
                    if (r == 16) first.close();  // leaves: its partitions are revoked to the second
                    Thread.sleep(100);
                }
                run.awaitAllCorrect(Duration.ofSeconds(40));
            } finally {
                checking.set(false);
                checker.join(5000);
                first.close();
                second.close();
            }
            assertThat(regressions).as("a stored version went backwards").isEmpty();
        }
    }

    /** Waits until the sink group has this many members, each with partitions. */
    private static void awaitMembers(SinkRun run, int members) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        try (var admin = run.kafka.admin()) {
            while (System.nanoTime() < deadline) {
                var group = admin.describeConsumerGroups(List.of("sink-" + run.id)).all().get().get("sink-" + run.id);
                if (group.members().size() == members
                        && group.members().stream().allMatch(m -> !m.assignment().topicPartitions().isEmpty())) {
                    return;
                }
                Thread.sleep(100);
            }
        }
        throw new AssertionError("the sink group did not reach " + members + " members with partitions");
    }

}
