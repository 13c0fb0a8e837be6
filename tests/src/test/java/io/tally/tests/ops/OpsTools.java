package io.tally.tests.ops;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The projects' own tools that check deploy/: promtool, helm and kubeconform, built from the Go module proxy at
 * the versions pinned under deploy/tools (once per machine, cached in the state directory like the schema
 * registry), and the offline inputs kubeconform needs (Kubernetes API schemas, the ServiceMonitor CRD).
 */
final class OpsTools {
    /** Cold: every tool compiled from source on two cores (promtool is the largest, ~4 min). */
    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(15);
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(2);

    private OpsTools() {}

    /** stdout is the tool's result (a rendered manifest, a path); stderr its warnings and progress. */
    record Run(List<String> command, int exitCode, String stdout, String stderr) {
        Run expectSuccess() {
            if (exitCode != 0) throw new AssertionError(String.join(" ", command) + " exited " + exitCode + ":\n" + output());
            return this;
        }

        String output() {
            return stdout + stderr;
        }
    }

    static Path promtool() { return Path.of(script("deploy/tools/build.sh", "promtool")); }

    static Path helm() { return Path.of(script("deploy/tools/build.sh", "helm")); }

    static Path kubeconform() { return Path.of(script("deploy/tools/build.sh", "kubeconform")); }

    /** Kubernetes' JSON schemas, one directory per release (v1.34.0-local-strict/...). */
    static Path kubernetesSchemas() { return Path.of(script("deploy/tools/k8s-schemas.sh")); }

    /** prometheus-operator's CustomResourceDefinitions (monitoring.coreos.com_*.yaml). */
    static Path monitoringCrds() { return Path.of(script("deploy/tools/crds.sh")); }

    static Run run(Path dir, String... command) {
        return run(dir, RUN_TIMEOUT, List.of(command));
    }

    /** Runs one of deploy/tools' scripts, which print what they made as their last line on stdout. */
    private static String script(String script, String... args) {
        Path root = OpsFiles.root();
        List<String> command = new java.util.ArrayList<>(List.of("bash", root.resolve(script).toString()));
        command.addAll(List.of(args));
        Run r = run(root, BUILD_TIMEOUT, command).expectSuccess();
        List<String> lines = r.stdout().lines().filter(l -> !l.isBlank()).toList();
        String last = lines.isEmpty() ? "" : lines.get(lines.size() - 1).trim();
        if (!Files.exists(Path.of(last))) throw new AssertionError(script + " printed no path it made:\n" + r.output());
        return last;
    }

    private static Run run(Path dir, Duration timeout, List<String> command) {
        try {
            Path out = Files.createTempFile("ops-tool", ".out");
            Path err = Files.createTempFile("ops-tool", ".err");
            try {
                Process p = new ProcessBuilder(command).directory(dir.toFile())
                        .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly();
                    throw new AssertionError(String.join(" ", command) + " did not finish within " + timeout + ":\n"
                            + Files.readString(out, StandardCharsets.UTF_8) + Files.readString(err, StandardCharsets.UTF_8));
                }
                return new Run(command, p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted: " + command, e);
        }
    }
}
