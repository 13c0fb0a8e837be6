package io.tally.loadgen.truth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.loadgen.rules.RuleSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@link GroundTruth#write} writes, {@link GroundTruthFile} reads back, whatever the file's layout. */
class GroundTruthFileTest {
    static final Instant T = GroundTruthTest.T;

    @Test
    void readsBackEveryBucketAsWrittenInPrettyAndCompactForm(@TempDir Path dir) throws IOException {
        GroundTruth truth = new GroundTruth(RuleSet.parse(GroundTruthTest.RULES, "test"), Duration.ofMinutes(5));
        truth.onEvent(GroundTruthTest.ev("tx1", "c1", "a@x", "s1", "APPROVED", "10", "2026-02-28T23:59:59.999Z"), T);
        truth.onEvent(GroundTruthTest.ev("tx2", "c1", "a@x", "s1", "APPROVED", "2.5", "2026-03-01T00:00:00Z"), T);
        truth.onEvent(GroundTruthTest.ev("tx3", "c1", "a@x", "s2", "APPROVED", "4", "2026-03-01T00:20:00Z"), T);
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("domain", "d");
        run.put("start", "2026-02-28T22:00:00Z");
        Path pretty = dir.resolve("truth.json");
        truth.write(pretty, run);
        Path compact = dir.resolve("compact.json");
        // Keys and values hold no line breaks, so dropping them and the indentation keeps the JSON.
        Files.writeString(compact, Files.readString(pretty).replaceAll("\\s*\\n\\s*", ""));

        for (Path file : List.of(pretty, compact)) {
            GroundTruthFile read = GroundTruthFile.read(file);
            assertThat(read.domain()).contains("d");
            assertThat(read.start()).contains(Instant.parse("2026-02-28T22:00:00Z"));
            // 2026-03-01T00:00Z is hour 492312.
            assertThat(read.bucketIndexes("d|c1", "spend", "hour")).containsExactly(492311L, 492312L);
            GroundTruthFile.Bucket hour = read.bucket("d|c1", "spend|hour|492312").orElseThrow();
            assertThat(hour.sum()).hasToString("6.5000"); // the scale as written
            assertThat(hour.count()).isEqualByComparingTo("2");
            assertThat(hour.min()).isEqualByComparingTo("2.5");
            assertThat(hour.max()).isEqualByComparingTo("4");
            // spend-sku lists only sum.
            GroundTruthFile.Bucket sku = read.bucket("d|c1", "spend-sku:s1|day|20513").orElseThrow();
            assertThat(sku.sum()).isEqualByComparingTo("2.5");
            assertThat(sku.count()).isNull();
            truth.buckets().forEach((pk, ids) -> ids.forEach((id, v) ->
                    assertThat(read.bucket(pk, id)).as("%s %s", pk, id).isPresent()));
            assertThat(read.bucket("d|c1", "spend|hour|1")).isEmpty();
            assertThat(read.bucket("d|nobody", "spend|hour|492312")).isEmpty();
        }
    }

    @Test
    void readsTheRunsFiguresInTheFilesOrder(@TempDir Path dir) throws IOException {
        GroundTruth truth = new GroundTruth(RuleSet.parse(GroundTruthTest.RULES, "test"), Duration.ofMinutes(5));
        truth.onEvent(GroundTruthTest.ev("tx1", "c1", "a@x", "s1", "APPROVED", "10", "2026-02-28T23:59:59.999Z"), T);
        truth.onEvent(GroundTruthTest.ev("tx1", "c1", "a@x", "s1", "APPROVED", "10", "2026-02-28T23:59:59.999Z"), T);
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("complete", true);
        run.put("acknowledged", 2);
        Map<String, Long> kinds = new LinkedHashMap<>();
        kinds.put("VALID", 1L);
        kinds.put("DUPLICATE", 1L);
        run.put("acknowledgedByKind", kinds);
        Path file = dir.resolve("truth.json");
        truth.write(file, run);

        GroundTruthFile.Figures figures = GroundTruthFile.read(file).figures();

        assertThat(figures.complete()).isTrue();
        assertThat(figures.acknowledged()).isEqualTo(2);
        assertThat(figures.acknowledgedByKind()).containsExactly(Map.entry("VALID", 1L), Map.entry("DUPLICATE", 1L));
        assertThat(figures.accepted()).isEqualTo(1);
        assertThat(figures.duplicates()).isEqualTo(1);
        assertThat(figures.documents()).isEqualTo(truth.documents());
        assertThat(figures.dlqTotal()).isZero();
        assertThat(figures.dlq()).containsExactly(Map.entry(GroundTruth.DECODE_FAILED, 0L), Map.entry(GroundTruth.INVALID, 0L),
                Map.entry(GroundTruth.LATE, 0L), Map.entry(GroundTruth.FUTURE, 0L));
    }

    @Test
    void refusesAFileWithoutBuckets(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("other.json"), "{\"run\": {}}");
        assertThatThrownBy(() -> GroundTruthFile.read(file)).isInstanceOf(IOException.class).hasMessageContaining("not a ground-truth file");
    }
}
