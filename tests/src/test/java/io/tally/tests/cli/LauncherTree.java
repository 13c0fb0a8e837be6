package io.tally.tests.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

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

    static void executable(Path file) throws IOException {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
