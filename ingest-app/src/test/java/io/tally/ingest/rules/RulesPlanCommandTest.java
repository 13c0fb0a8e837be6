package io.tally.ingest.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.rules.GradeRules;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RulesPlanCommandTest {
    @TempDir
    Path dir;

    record Run(int exit, String out, String err) {}

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = RulesPlanCommand.run(args, Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private String file(String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text).toString();
    }

    private String defaultRulesWith(String from, String to) throws IOException {
        String text = Files.readString(Path.of("../rules/default-rules.yaml"));
        assertThat(text).contains(from);
        return file("edited.yaml", text.replace(from, to));
    }

    @Test
    void theSameRulesHaveNothingToDo() throws IOException {
        Run r = run(GradeRules.BUILTIN_DEFAULT, "../rules/default-rules.yaml");
        assertThat(r.exit()).as(r.err()).isEqualTo(RulesPlanCommand.EXIT_NOTHING_TO_DO);
        assertThat(r.out()).endsWith("nothing to do: 5 grades unchanged\n");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void aChangedFileExitsThreeWithThePlan() throws IOException {
        String edited = defaultRulesWith("""
                  - name: orders-per-email
                    entity: email
                    value: one
                    aggregations: [count]
                    units: [hour]
                """, """
                  - name: orders-per-email
                    entity: email
                    value: one
                    aggregations: [count]
                    units: [hour, day]
                """);
        Run r = run(GradeRules.BUILTIN_DEFAULT, edited);
        assertThat(r.exit()).as(r.err()).isEqualTo(RulesPlanCommand.EXIT_CHANGES).isEqualTo(3);
        assertThat(r.out()).containsPattern("orders-per-email/day +added +[0-9a-f]{12}\n")
                .endsWith("1 added, 5 unchanged (6 grades)\n");
    }

    @Test
    void theSourcesFileTakesPartInTheVersions() throws IOException {
        Run same = run(GradeRules.BUILTIN_DEFAULT, GradeRules.BUILTIN_DEFAULT, "--ingest.sources.file=../rules/two-schema-sources.yaml");
        assertThat(same.exit()).as(same.err()).isZero();
        assertThat(same.out()).contains("(sources ../rules/two-schema-sources.yaml)");
    }

    @Test
    void anInvalidFileExitsTwo() throws IOException {
        Run r = run(GradeRules.BUILTIN_DEFAULT, file("bad.yaml", "rules:\n  - name: Bad Name\n"));
        assertThat(r.exit()).isEqualTo(RulesPlanCommand.EXIT_USAGE).isEqualTo(2);
        assertThat(r.err()).contains("Invalid grade rules").contains("name must match");
        assertThat(r.out()).isEmpty();
        assertThat(run(GradeRules.BUILTIN_DEFAULT, dir.resolve("missing.yaml").toString()).exit()).isEqualTo(2);
        assertThat(run(GradeRules.BUILTIN_DEFAULT, GradeRules.BUILTIN_DEFAULT, "--ingest.sources.file=" + file("s.yaml", "sources: []"))
                .exit()).isEqualTo(2);
    }

    @Test
    void anythingButOneOrTwoFilesExitsTwo() {
        Run none = run();
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).contains("expected a rules file (against the deployment) or two").contains("Usage: ./tally rules plan");
        assertThat(run("a.yaml", "b.yaml", "c.yaml").exit()).isEqualTo(2);
    }

    @Test
    void oneInvalidFileExitsTwoBeforeContactingTheDeployment() throws IOException {
        Run r = run(file("bad.yaml", "rules:\n  - name: Bad Name\n"));
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("name must match").doesNotContain("cannot read or write the rules record");
    }

    @Test
    void oneFileWithTheDeploymentUnreachableExitsOneSayingWhere() {
        Run r = run(GradeRules.BUILTIN_DEFAULT, "--cosmos.endpoint=https://127.0.0.1:1", "--cosmos.create-if-missing=false");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("cannot read or write the rules record in tally/buckets at https://127.0.0.1:1");
    }

    @Test
    void helpNamesTheExitStatusAndTheSetting() {
        Run r = run("x.yaml", "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).startsWith("Usage: ./tally rules plan").contains("3 something would").contains("--ingest.sources.file");
    }
}
