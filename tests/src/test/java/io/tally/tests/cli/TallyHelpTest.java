package io.tally.tests.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ./tally COMMAND --help} prints the command's usage, exits 0 and builds, starts and runs nothing.
 *
 * <p>The launcher scripts run from a copy of the tree that holds only them, with every program they could
 * start to build or run something (Maven, java, node, npm, go, flock, setsid, nohup, curl) replaced by a stub
 * that writes its command line to a trace file. The one call help may make is {@code java -jar APP.jar ... --help}
 * on a jar that exists, to list its settings; the stub answers it like an application would. Afterwards the trace
 * holds nothing else and the state directory (logs, pid files, data) was never created.
 */
class TallyHelpTest {
    static final List<String> SCRIPTS = List.of("tally", "local/lib/common.sh", "local/stack.sh", "local/demo.sh");
    static final List<String> STUBS = List.of("java", "mvn", "node", "npm", "go", "flock", "setsid", "nohup", "curl");

    @TempDir
    static Path root;
    static Path trace;

    @BeforeAll
    static void copyOfTheLaunchers() throws IOException {
        LauncherTree.copyScripts(root, SCRIPTS);
        trace = root.resolve("trace");
        Files.createDirectories(root.resolve("stubs"));
        for (String stub : STUBS) {
            stub(root.resolve("stubs").resolve(stub), "");
        }
        stub(root.resolve("mvnw"), "");
        // An application jar asked for help lists its settings; anything else it is asked counts as running it.
        stub(root.resolve("stubs/java"), "case \" $* \" in *' -jar '*' --help '*) echo 'Usage: stub'; echo '  --stub.setting'; exit 0 ;; esac\n");
        for (String app : List.of("ingest-app", "read-service", "loadgen")) {
            Files.createDirectories(root.resolve(app + "/target"));
            Files.writeString(root.resolve(app + "/target/" + app + ".jar"), "stub");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"demo", "demo --keep-running", "stack", "stack up", "stack up kafka", "stack down", "stack clean --all",
        "build", "loadgen", "loadgen --loadgen.events=5", "ingest", "ingest --ingest.role=sink", "serve", "replay --from 2026-01-01", "topics", "rules check", "rules plan", "rules apply", "rules backfill",
        "bench", "bench --quick", "bench end-to-end --quick", "bench sink-latency", "bench read-latency", "bench scale-out",
        "bench report", "bench local-cosmos", "bench loadgen", "bench aggregation", "bench sink", "bench read-service", "bench freshness-cost",
        "bench backfill", "bench sink-heap", "bench read-cost"})
    void printsUsageAndStartsNothing(String command) throws Exception {
        for (String flag : List.of("--help", "-h")) {
            List<String> cmd = new ArrayList<>(List.of("tally"));
            cmd.addAll(Arrays.asList(command.split(" ")));
            cmd.add(flag);
            LauncherTree.Run run = LauncherTree.run(root, trace, cmd);
            CommandRun r = run.result();
            String what = "./tally " + command + " " + flag;

            assertThat(r.exit()).as("%s exit status; stderr: %s", what, r.err()).isZero();
            assertThat(r.out()).as(what).containsPattern("(?m)^Usage: ");
            assertThat(run.calls()).as("%s ran only an application's --help", what)
                    .allMatch(c -> c.matches("java -jar \\S+\\.jar( replay| topics| rules check| rules plan| rules apply| rules backfill)? --help"));
            assertThat(root.resolve("state")).as("%s created the state directory", what).doesNotExist();
            if (List.of("loadgen", "ingest", "serve", "replay", "topics", "rules").contains(command.split(" ")[0])) {
                assertThat(r.out()).as("%s lists the jar's settings", what).contains("--stub.setting");
            }
        }
    }

    private static void stub(Path file, String body) throws IOException {
        LauncherTree.stub(file, body, 1);
    }
}
