package io.tally.testsupport.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the test-support launchers share: the repository root, log tails, npm installs, waiting. */
public final class Processes {
    private static final int TAIL_LINES = 40;

    private Processes() {}

    /** The repository root: the first directory upwards from user.dir holding local/stack.sh. */
    public static Path repoRoot() {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("local/stack.sh"))) return p;
        }
        throw new IllegalStateException("cannot find the repository root (a directory with local/stack.sh) above " + dir);
    }

    /** The whole file, or "" when it does not exist yet. */
    public static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The last lines of a log, indented, for failure messages. */
    public static String tail(Path file) {
        List<String> lines;
        try {
            lines = read(file).lines().toList();
        } catch (UncheckedIOException e) {
            return "  (cannot read " + file + ": " + e.getCause().getMessage() + ")";
        }
        List<String> last = lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size());
        return last.isEmpty() ? "  (no output)" : "  " + String.join("\n  ", last);
    }

    /**
     * {@code npm ci} in {@code dir} unless {@code installed} (a path inside it) already exists, so a
     * fresh clone installs on first use and later runs skip it. npm is {@code TALLY_NPM} or {@code npm}.
     */
    public static void npmCiIfMissing(Path dir, String installed, Path log, Duration timeout) {
        if (Files.exists(dir.resolve(installed))) return;
        String npm = System.getenv().getOrDefault("TALLY_NPM", "npm");
        try {
            Files.createDirectories(log.getParent());
            Process p = new ProcessBuilder(npm, "ci", "--no-audit", "--no-fund").directory(dir.toFile())
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(npm + " ci in " + dir + " did not finish within " + timeout + "\n" + tail(log));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(npm + " ci in " + dir + " failed with code " + p.exitValue() + "\n" + tail(log));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run '" + npm + " ci' in " + dir + " (is Node.js with npm on PATH?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running npm ci in " + dir, e);
        }
    }

    /** Sleeps; an interrupt ends the wait with an exception naming what was awaited. */
    public static void sleep(long millis, String awaiting) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + awaiting, e);
        }
    }
}
