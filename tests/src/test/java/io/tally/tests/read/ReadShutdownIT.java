package io.tally.tests.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.read.ReadMain;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.process.ChildJvm;
import io.tally.testsupport.process.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * read-service in its own JVM, stopped the way a platform stops it (SIGTERM): /health/ready turns 503 at once,
 * while liveness and the API keep answering until read.shutdown.drain.ms has passed; then the process exits.
 */
@ExtendWith(LocalStackExtension.class)
class ReadShutdownIT {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final Duration DRAIN = Duration.ofSeconds(6);

    @Test
    void readinessTurns503AsSoonAsShutdownBeginsWhileRequestsAreStillServed(LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        int port = Ports.free();
        String database = "read-stop-" + UUID.randomUUID().toString().substring(0, 8);
        try (ChildJvm read = ChildJvm.start(ReadMain.class, List.of("--read.http.port=" + port, "--cosmos.endpoint=" + cosmos.endpoint(),
                "--cosmos.database=" + database, "--read.cosmos.warmup-requests=1", "--read.shutdown.drain.ms=" + DRAIN.toMillis()),
                Map.of(), dir.resolve("read.log"))) {
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (status(port, "/health/ready") != 200) {
                assertThat(read.isAlive()).as("read-service exited while starting\n%s", read.logTail()).isTrue();
                assertThat(System.nanoTime()).as("read-service not ready within 120 s\n%s", read.logTail()).isLessThan(deadline);
                Thread.sleep(200);
            }

            long signalled = System.nanoTime();
            ProcessHandle.of(read.pid()).orElseThrow().destroy(); // SIGTERM
            int ready = status(port, "/health/ready");
            while (ready == 200 && System.nanoTime() - signalled < Duration.ofSeconds(2).toNanos()) {
                Thread.sleep(20); // the JVM starts its shutdown hooks within milliseconds; allow for a busy machine
                ready = status(port, "/health/ready");
            }
            long readyAfterMs = (System.nanoTime() - signalled) / 1_000_000;
            assertThat(ready).as("readiness after SIGTERM\n%s", read.logTail()).isEqualTo(503);
            assertThat(readyAfterMs).as("ms until readiness said 503").isLessThan(DRAIN.toMillis() / 2);
            assertThat(status(port, "/health/live")).as("liveness during the drain").isEqualTo(200);
            assertThat(status(port, "/v1/features/stop%7Ccust-1")).as("the API during the drain").isEqualTo(200);

            assertThat(read.awaitExit(DRAIN.plusSeconds(30))).as("exited after the drain\n%s", read.logTail()).isPresent();
            long stoppedAfterMs = (System.nanoTime() - signalled) / 1_000_000;
            assertThat(stoppedAfterMs).as("the port stays open for the drain").isGreaterThanOrEqualTo(DRAIN.toMillis());
        }
    }

    /** The status of a GET, or -1 when nothing answers. */
    private static int status(int port, String path) throws InterruptedException {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        }
    }
}
