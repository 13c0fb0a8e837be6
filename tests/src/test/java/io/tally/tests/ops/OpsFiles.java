package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Where the operations files live: dashboards, rules and their unit tests, the Helm chart, the tools that check them. */
public final class OpsFiles {
    private OpsFiles() {}

    public static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("deploy")) && Files.isRegularFile(dir.resolve("mvnw"))) return dir;
        }
        throw new AssertionError("no deploy/ next to mvnw above " + Path.of("").toAbsolutePath());
    }

    public static Path monitoring() { return root().resolve("deploy/monitoring"); }

    public static Path chart() { return root().resolve("deploy/helm/tally"); }

    public static List<Path> dashboards() {
        return nonEmpty(ReferencedMetrics.list(monitoring().resolve("grafana/dashboards"), "*.json").toList(), "dashboards");
    }

    public static List<Path> rules() {
        return nonEmpty(ReferencedMetrics.list(monitoring().resolve("prometheus/rules"), "*.yml").toList(), "rule files");
    }

    public static List<Path> ruleTests() {
        return nonEmpty(ReferencedMetrics.list(monitoring().resolve("prometheus/tests"), "*.yml").toList(), "rule unit tests");
    }

    static String relative(Path file) {
        return root().relativize(file).toString();
    }

    private static List<Path> nonEmpty(List<Path> files, String what) {
        assertThat(files).as("%s under %s", what, monitoring()).isNotEmpty();
        return files;
    }
}
