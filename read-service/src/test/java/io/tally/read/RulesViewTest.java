package io.tally.read;

import static io.tally.read.RulesFixtures.SEAM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.model.TimeUnit;
import io.tally.rules.RulesException;
import io.tally.rules.state.RulesState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RulesViewTest {
    @Test
    void withoutARecordEveryGradeReadsAsItAlwaysDid() {
        RulesView v = RulesView.ofFile(RulesFixtures.file(), "file.yaml");
        assertThat(v.source()).isEqualTo("file");
        assertThat(v.record()).isEmpty();
        assertThat(v.status("spend", TimeUnit.DAY)).hasValue(GradeStatus.UNRECORDED);
        assertThat(v.status("no-such-rule", TimeUnit.DAY)).as("the rules file decides unknown grades, as before").hasValue(GradeStatus.UNRECORDED);
        assertThat(v.incompleteAt(SEAM.minusSeconds(3600))).isEmpty();
        assertThat(v.disagreements()).isEmpty();
    }

    @Test
    void withARecordItsGradesAreTheKnownOnesAndRemovedOnesAreUnknown() {
        RulesView v = RulesView.ofRecord(RulesFixtures.second());
        assertThat(v.source()).isEqualTo("record");
        assertThat(v.rules().rule("orders")).isEmpty();
        assertThat(v.status("orders", TimeUnit.HOUR)).isEmpty();
        assertThat(v.status("spend", TimeUnit.MONTH)).isEmpty();
        GradeStatus day = v.status("spend", TimeUnit.DAY).orElseThrow();
        assertThat(day.holds(RulesState.verFloor(1) + 5)).isFalse();
        assertThat(day.holds(RulesState.verFloor(2) + 5)).isTrue();
        assertThat(v.status("spend", TimeUnit.HOUR).orElseThrow().holds(5)).as("unchanged since generation 0").isTrue();
        assertThat(v.retention().withTtl(GradeRetentionTest.bucket("spend")).ttl()).isEqualTo(35 * 86_400);
    }

    @Test
    void theGradesIncompleteAtAnInstantAreThosePendingWhoseBucketThereStartsBeforeTheSeam() {
        RulesView v = RulesView.ofRecord(RulesFixtures.second());
        assertThat(v.incompleteAt(SEAM.plusSeconds(3600))).as("the seam's day started before it")
                .isEqualTo(Map.of("spend", Set.of("day")));
        assertThat(v.incompleteAt(SEAM.plusSeconds(86_400))).as("the next day starts after it").isEmpty();
        RulesView filled = RulesView.ofRecord(RulesFixtures.second().backfilled("spend", TimeUnit.DAY));
        assertThat(filled.incompleteAt(SEAM)).isEmpty();
    }

    @Test
    void describeListsTheRecordWithEachGradesCompletenessAndTheRetiredGrades() {
        JsonNode d = RulesView.ofRecord(RulesFixtures.second()).describe();
        assertThat(d.get("source").asText()).isEqualTo("record");
        assertThat(d.get("generation").asLong()).isEqualTo(2);
        assertThat(d.get("appliedAt").asText()).isEqualTo("2026-11-02T00:00:00Z");
        assertThat(d.get("rulesOrigin").asText()).isEqualTo("v2.yaml");
        assertThat(d.get("grades")).hasSize(2);
        JsonNode day = d.get("grades").get(1);
        assertThat(day.get("rule").asText()).isEqualTo("spend");
        assertThat(day.get("unit").asText()).isEqualTo("day");
        assertThat(day.get("version").asText()).isEqualTo("dddddddddddd");
        assertThat(day.get("since").asLong()).isEqualTo(2);
        assertThat(day.get("countingFrom").asText()).isEqualTo(SEAM.toString());
        assertThat(day.get("backfill").asText()).isEqualTo("pending");
        assertThat(day.get("complete").asBoolean()).isFalse();
        JsonNode hour = d.get("grades").get(0);
        assertThat(hour.get("countingFrom").isNull()).isTrue();
        assertThat(hour.get("complete").asBoolean()).isTrue();
        assertThat(d.get("retired")).hasSize(2);
        assertThat(d.get("retired").get(1).toString())
                .isEqualTo("{\"rule\":\"orders\",\"unit\":\"hour\",\"version\":\"cccccccccccc\",\"generation\":2,\"why\":\"removed\"}");
        assertThat(d.has("rules")).as("the rules text stays in the record").isFalse();
    }

    @Test
    void describeWithoutARecordListsTheFilesGradesAsComplete() {
        JsonNode d = RulesView.ofFile(RulesFixtures.file(), "file.yaml").describe();
        assertThat(d.get("source").asText()).isEqualTo("file");
        assertThat(d.get("generation").isNull()).isTrue();
        assertThat(d.get("rulesOrigin").asText()).isEqualTo("file.yaml");
        List<String> grades = new ArrayList<>();
        d.get("grades").forEach(g -> {
            grades.add(g.get("rule").asText() + "/" + g.get("unit").asText());
            assertThat(g.get("complete").asBoolean()).isTrue();
            assertThat(g.get("version").isNull()).isTrue();
        });
        assertThat(grades).containsExactly("spend/hour", "spend/day", "orders/hour");
        assertThat(d.get("retired")).isEmpty();
    }

    @Test
    void aRecordWhoseRulesDoNotParseIsRefusedAndDisagreementsAreNamed() {
        RulesState first = RulesFixtures.first();
        RulesState broken = new RulesState(1, first.appliedAt(), "x", "rules: [", first.grades(), List.of());
        assertThatThrownBy(() -> RulesView.ofRecord(broken)).isInstanceOf(RulesException.class);

        RulesState lacking = new RulesState(1, first.appliedAt(), "x", first.rulesText(), first.grades().subList(0, 2), List.of());
        assertThat(RulesView.ofRecord(lacking).disagreements()).containsExactly("orders/hour is in the rules but not in the record");
        RulesState extra = new RulesState(1, first.appliedAt(), "x", "rules:\n" + RulesFixtures.SPEND, first.grades(), List.of());
        assertThat(RulesView.ofRecord(extra).disagreements()).containsExactly("orders/hour is in the record but not in its rules");
        assertThat(RulesView.ofRecord(first).disagreements()).isEmpty();
    }
}
