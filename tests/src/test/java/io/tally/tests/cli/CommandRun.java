package io.tally.tests.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** One finished command: exit status and everything it wrote, stdout and stderr apart. */
record CommandRun(int exit, String out, String err) {

    /**
     * Runs {@code command} in {@code dir} with {@code env} added to this process's environment (a null value
     * removes the variable). A command still running after {@code timeout} is killed and fails the test.
     */
    static CommandRun of(List<String> command, Path dir, Map<String, String> env, Duration timeout) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        env.forEach((k, v) -> {
            if (v == null) pb.environment().remove(k);
            else pb.environment().put(k, v);
        });
        Process p = pb.start();
        p.getOutputStream().close();
        // Both pipes are drained while it runs: a full pipe would block the command.
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " still running after " + timeout.toSeconds()
                    + " s: it does more than print its help");
        }
        return new CommandRun(p.exitValue(), out.get(), err.get());
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
