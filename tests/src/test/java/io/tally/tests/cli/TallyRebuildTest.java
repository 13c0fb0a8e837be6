package io.tally.tests.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ./tally serve} (and every command that runs an application) rebuilds the jars first when anything they are
 * built from changed since: the default grade rules {@code rules/default-rules.yaml} (copied into the rules module's jar), a
 * resource, a source or a pom — and does not when nothing did. The launcher runs from a copy of the tree that holds
 * only it and a skeleton of the modules; {@code mvnw} and {@code java} are stubs that write their command lines to a
 * trace file.
 */
class TallyRebuildTest {
    static final List<String> SCRIPTS = List.of("tally", "local/lib/common.sh");
    static final List<String> APPS = List.of("ingest-app", "read-service", "loadgen");
    static final List<String> INPUTS = List.of("rules/default-rules.yaml", "read-service/src/main/resources/openapi.yaml",
            "ingest-app/src/main/java/io/tally/Main.java", "schemas/src/main/avro/TransactionEvent.avsc", "cosmos-model/pom.xml",
            "config/src/main/java/io/tally/Config.java", "rules/src/main/java/io/tally/rules/GradeRules.java", "loadgen/pom.xml", "pom.xml");

    @TempDir
    Path root;
    Path trace;
    Instant built;

    @BeforeEach
    void aTreeWhoseJarsAreNewerThanEverything() throws IOException {
        LauncherTree.copyScripts(root, SCRIPTS);
        trace = root.resolve("trace");
        Instant old = Instant.now().minusSeconds(3600);
        for (String input : INPUTS) write(root.resolve(input), "x", old);
        built = Instant.now().minusSeconds(60);
        for (String app : APPS) write(root.resolve(app + "/target/" + app + ".jar"), "jar", built);
        // The stub build makes every jar new, as the real one would.
        LauncherTree.stub(root.resolve("mvnw"), "for a in " + String.join(" ", APPS) + "; do touch \"$a/target/$a.jar\"; done\n", 0);
        Files.createDirectories(root.resolve("stubs"));
        LauncherTree.stub(root.resolve("stubs/java"), "case \"$*\" in -version*) echo 'openjdk version \"17.0.9\"' >&2 ;; esac\n", 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rules/default-rules.yaml", "read-service/src/main/resources/openapi.yaml",
        "ingest-app/src/main/java/io/tally/Main.java", "schemas/src/main/avro/TransactionEvent.avsc", "cosmos-model/pom.xml",
        "config/src/main/java/io/tally/Config.java", "rules/src/main/java/io/tally/rules/GradeRules.java", "loadgen/pom.xml", "pom.xml"})
    void anEditedInputRebuildsTheJarsBeforeTheAppRunsAndOnlyThen(String edited) throws Exception {
        assertThat(builds(serve())).as("nothing changed since the jars were built").isZero();

        write(root.resolve(edited), "edited", Instant.now());
        List<String> calls = serve();
        assertThat(builds(calls)).as("after editing %s: %s", edited, calls).isEqualTo(1);
        assertThat(calls.get(calls.size() - 1)).as("the app runs after the build").contains("-jar").contains("read-service.jar");

        assertThat(builds(serve())).as("built once, the jars are current again").isZero();
    }

    @Test
    void aBuildThatLeavesAnUnchangedJarAsItWasIsNotRepeatedAtTheNextStart() throws Exception {
        // Maven's jar plugin does not rewrite a jar whose content did not change: the launcher marks it built itself.
        LauncherTree.stub(root.resolve("mvnw"), "", 0);
        write(root.resolve("ingest-app/src/main/java/io/tally/Main.java"), "touched, same content", Instant.now());
        assertThat(builds(serve())).isEqualTo(1);
        assertThat(builds(serve())).as("the jar was marked built").isZero();
    }

    /** Runs {@code ./tally serve} with the stubs; the trace lines it left. */
    private List<String> serve() throws Exception {
        LauncherTree.Run run = LauncherTree.run(root, trace, List.of("tally", "serve"));
        assertThat(run.result().exit()).as("./tally serve; stderr: %s", run.result().err()).isZero();
        return run.calls();
    }

    private static long builds(List<String> calls) {
        return calls.stream().filter(c -> c.startsWith("mvnw ")).count();
    }

    private static void write(Path file, String text, Instant mtime) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        Files.setLastModifiedTime(file, FileTime.from(mtime));
    }
}
