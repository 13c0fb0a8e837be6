package io.tally.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchLockTest {

    /** A second benchmark process waits for the first, says for which lock and who holds it, and goes on after it. */
    @Test
    void aSecondProcessWaitsAndSaysForWhat(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bench.lock");
        Process child;
        try (BenchLock held = BenchLock.acquire(file, "first-bench (pid 1)", m -> { })) {
            child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
                    "-cp", System.getProperty("java.class.path"), Child.class.getName(), file.toString())
                    .redirectErrorStream(true).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertThat(first).isEqualTo("[bench] waiting for the benchmark lock " + file
                    + ", held by first-bench (pid 1) (benchmarks never run at the same time) ...");
            assertThat(child.isAlive()).as("still waiting while the lock is held").isTrue();
            assertThat(Files.readString(file)).isEqualTo("first-bench (pid 1)\n");
        }
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String rest = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(rest).contains("[bench] got the benchmark lock " + file, "child holds it");
        assertThat(child.exitValue()).isZero();
    }

    /** ./tally bench holds the same file with flock(1) while its benchmark JVM takes this lock: they must not block each other. */
    @Test
    void theLaunchersFlockDoesNotBlockItsOwnBenchmark(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bench.lock");
        Path flock = List.of("/usr/bin/flock", "/bin/flock").stream().map(Path::of).filter(Files::isExecutable).findFirst().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(flock != null, "flock(1) is not installed");
        try (BenchLock held = BenchLock.acquire(file, "bench", m -> { })) {
            Process p = new ProcessBuilder(flock.toString(), "--nonblock", file.toString(), "true").start();
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("flock -n on a file this JVM has locked").isZero();
        }
    }

    /** Takes the lock given as the argument, reporting on stdout. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            try (BenchLock lock = BenchLock.acquire(Path.of(args[0]), "child", System.out::println)) {
                System.out.println("child holds it");
            }
        }
    }
}
