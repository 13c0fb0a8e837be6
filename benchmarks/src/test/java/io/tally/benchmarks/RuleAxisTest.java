package io.tally.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.rules.GradeRules;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class RuleAxisTest {
    /** The module runs with its own directory as the working directory; the files live at the repository's root. */
    private static Path file(RuleAxis.Shape s) {
        return Path.of("..").resolve(s.file());
    }

    @Test
    void theCheckedInFilesAreTheGeneratorsOutput() throws Exception {
        for (RuleAxis.Shape s : List.of(RuleAxis.VELOCITY, RuleAxis.VELOCITY_200)) {
            assertThat(Files.readString(file(s), StandardCharsets.UTF_8)).as("%s: regenerate with RuleAxis.main", s.file())
                    .isEqualTo(RuleAxis.yaml(s));
        }
    }

    @Test
    void eachSizeParsesToTheRulesItPromises() {
        for (RuleAxis.Shape s : List.of(RuleAxis.VELOCITY, RuleAxis.VELOCITY_200)) {
            GradeRules rules = GradeRules.parse(RuleAxis.yaml(s), s.file());
            assertThat(rules.rules()).as(s.file()).hasSize(s.rules());
        }
        assertThat(RuleAxis.VELOCITY.rules()).isEqualTo(51);
        assertThat(RuleAxis.VELOCITY_200.rules()).isEqualTo(201);
    }
}
