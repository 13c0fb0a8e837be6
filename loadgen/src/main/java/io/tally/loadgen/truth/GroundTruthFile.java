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
import java.util.List;
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

    private static Optional<String> text(JsonNode n) {
        return n.isTextual() ? Optional.of(n.asText()) : Optional.empty();
    }
}
