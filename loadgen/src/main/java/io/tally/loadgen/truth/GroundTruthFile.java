package io.tally.loadgen.truth;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A ground-truth file as {@link GroundTruth#write} wrote it, read back by structure: whoever checks a
 * run against it (the demo, a test) asks for a bucket by pk and id and never depends on how the file
 * is laid out. Decimals keep the scale they were written with (12.3400 stays 12.3400).
 */
public final class GroundTruthFile {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .build();

    /** One expected bucket; an aggregation its rule does not list is null. */
    public record Bucket(BigDecimal sum, BigDecimal count, BigDecimal min, BigDecimal max) {}

    /**
     * What the run did and what the pipeline must make of it, in the file's order.
     *
     * @param complete           every planned record was acknowledged
     * @param acknowledgedByKind acknowledged records by what they were made to exercise
     * @param dlq                expected DLQ records by reason
     */
    public record Figures(boolean complete, long acknowledged, Map<String, Long> acknowledgedByKind, long accepted,
                          long duplicates, long documents, long dlqTotal, Map<String, Long> dlq) {}

    private final JsonNode root;

    private GroundTruthFile(JsonNode root) {
        this.root = root;
    }

    public static GroundTruthFile read(Path file) throws IOException {
        JsonNode root = JSON.readTree(file.toFile());
        if (root == null || !root.path("buckets").isObject()) {
            throw new IOException(file + " is not a ground-truth file (no \"buckets\" object)");
        }
        return new GroundTruthFile(root);
    }

    /** The run's tenant; empty for a replayed run, which spans whatever domains the file held. */
    public Optional<String> domain() {
        return text(root.path("run").path("domain"));
    }

    /** Where the generated event times begin; empty for a replayed run. */
    public Optional<Instant> start() {
        return text(root.path("run").path("start")).map(Instant::parse);
    }

    public Figures figures() {
        JsonNode run = root.path("run"), expected = root.path("expected");
        return new Figures(run.path("complete").asBoolean(false), run.path("acknowledged").asLong(),
                counts(run.path("acknowledgedByKind")), expected.path("accepted").asLong(), expected.path("duplicates").asLong(),
                expected.path("documents").asLong(), expected.path("dlqTotal").asLong(), counts(expected.path("dlq")));
    }

    /** Acknowledged records by topic (the transactions topic first); empty in a file written before there were two. */
    public Map<String, Long> acknowledgedByTopic() {
        return counts(root.path("run").path("acknowledgedByTopic"));
    }

    public Optional<Bucket> bucket(String pk, String id) {
        JsonNode b = root.path("buckets").path(pk).path(id);
        if (!b.isObject()) return Optional.empty();
        return Optional.of(new Bucket(decimal(b, "sum"), decimal(b, "count"), decimal(b, "min"), decimal(b, "max")));
    }

    /** Bucket indexes of one grade and unit of an entity, ascending. */
    public List<Long> bucketIndexes(String pk, String grade, String unit) {
        String prefix = grade + "|" + unit + "|";
        List<Long> out = new ArrayList<>();
        for (Iterator<String> ids = root.path("buckets").path(pk).fieldNames(); ids.hasNext(); ) {
            String id = ids.next();
            if (id.startsWith(prefix)) out.add(Long.parseLong(id.substring(prefix.length())));
        }
        Collections.sort(out);
        return out;
    }

    private static BigDecimal decimal(JsonNode bucket, String field) {
        JsonNode v = bucket.get(field);
        return v == null || !v.isNumber() ? null : v.decimalValue();
    }

    private static Map<String, Long> counts(JsonNode object) {
        Map<String, Long> out = new LinkedHashMap<>();
        object.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asLong()));
        return Collections.unmodifiableMap(out);
    }

    private static Optional<String> text(JsonNode n) {
        return n.isTextual() ? Optional.of(n.asText()) : Optional.empty();
    }
}
