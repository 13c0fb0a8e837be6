package io.tally.tests.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A throw-away tree for running the launcher scripts: copies of the scripts, and stubs standing in for the programs
 * they would start, each writing its command line to the file named by {@code $TRACE}.
 */
final class LauncherTree {
    private LauncherTree() {}

    /** Copies {@code scripts} (paths relative to the repository root) into {@code root}, executable. */
    static void copyScripts(Path root, List<String> scripts) throws IOException {
        Path repo = Path.of("..").toAbsolutePath().normalize();
        for (String script : scripts) {
            Path to = root.resolve(script);
            Files.createDirectories(to.getParent());
            Files.copy(repo.resolve(script), to);
            executable(to);
        }
    }

    /** A program that appends "name args" to $TRACE, runs {@code body} (shell) and exits with {@code exit}. */
    static void stub(Path file, String body, int exit) throws IOException {
        Files.writeString(file, "#!/bin/sh\necho \"$(basename \"$0\") $*\" >> \"$TRACE\"\n" + body + "exit " + exit + "\n");
        executable(file);
    }

    /** What a launcher run left: its result and the stub calls it made, in order. */
    record Run(CommandRun result, List<String> calls) {}

    /**
     * Runs {@code bash <command...>} in {@code root} with the stubs first on the PATH, no JAVA_HOME and the state
     * directory inside the tree, after clearing {@code trace}.
     */
    static Run run(Path root, Path trace, List<String> command) throws Exception {
        Files.deleteIfExists(trace);
        Map<String, String> env = new HashMap<>();
        env.put("PATH", root.resolve("stubs") + ":" + System.getenv("PATH"));
        env.put("JAVA_HOME", null);
        env.put("TRACE", trace.toString());
        env.put("TALLY_STATE_DIR", root.resolve("state").toString());
        List<String> cmd = new ArrayList<>(List.of("bash"));
        cmd.addAll(command);
        CommandRun r = CommandRun.of(cmd, root, env, Duration.ofSeconds(30));
        return new Run(r, Files.exists(trace) ? Files.readAllLines(trace) : List.of());
    }

    static void executable(Path file) throws IOException {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
