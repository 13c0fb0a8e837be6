package io.tally.testsupport.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A main class of this test classpath run in its own JVM, so a test can kill it the way a machine
 * failure would ({@link #kill()}: SIGKILL, no shutdown hooks, no flush) and start it again.
 * Output goes to a log file whose tail failures quote.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final Path log;

    private ChildJvm(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Starts {@code mainClass} with the test JVM's classpath, the given args and extra environment. */
    public static ChildJvm start(Class<?> mainClass, List<String> args, Map<String, String> env, Path log) {
        return start(mainClass.getName(), List.of(), args, env, log);
    }

    /**
     * As {@link #start(Class, List, Map, Path)}, by class name (a Scala object such as {@code kafka.Kafka}),
     * with extra JVM options ({@code -D...}) placed before the main class.
     */
    public static ChildJvm start(String mainClass, List<String> jvmOptions, List<String> args, Map<String, String> env, Path log) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError", "-cp", System.getProperty("java.class.path")));
        cmd.addAll(jvmOptions);
        for (String p : List.of("javax.net.ssl.trustStore", "javax.net.ssl.trustStorePassword", "javax.net.ssl.trustStoreType")) {
            if (System.getProperty(p) != null) cmd.add("-D" + p + "=" + System.getProperty(p)); // trust the local Cosmos endpoint too
        }
        cmd.add(mainClass);
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        try {
            Files.createDirectories(log.getParent());
            return new ChildJvm(pb.start(), log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + mainClass, e);
        }
    }

    /** SIGKILL: the process gets no chance to commit, flush or close anything. */
    public void kill() {
        process.destroyForcibly();
        await(process::isAlive, false, Duration.ofSeconds(30));
    }

    /** SIGTERM, then waits for a clean exit. */
    public int stop(Duration timeout) {
        process.destroy();
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("did not stop within " + timeout + "\n" + logTail());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return process.exitValue();
    }

    /** Waits for the process to end by itself (a command-line tool); its exit code, or empty after the timeout. */
    public java.util.OptionalInt awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    ? java.util.OptionalInt.of(process.exitValue()) : java.util.OptionalInt.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return java.util.OptionalInt.empty();
        }
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public long pid() {
        return process.pid();
    }

    /** The last lines of the log, for failure messages. */
    public String logTail() {
        return Processes.tail(log);
    }

    private static void await(BooleanSupplier condition, boolean until, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (condition.getAsBoolean() != until && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) kill();
    }
}
