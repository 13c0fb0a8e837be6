package io.tally.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every answer shape writes decimals in plain notation with their scale: the point read (a document written as is),
 * the range and feature vector (documents turned into a tree first) and the roll-up (a tree of sums).
 */
class PlainDecimalsTest {
    static final Pattern EXPONENT = Pattern.compile("\\d[eE][+-]?\\d");

    static BucketDocument doc(String sum, String min, String max) {
        return new BucketDocument("d|e", "g|day|1", "g", "day", "1970-01-02T00:00:00Z", new BigDecimal(sum), 2,
                new BigDecimal(min), new BigDecimal(max), 2, 60, null);
    }

    static String text(BucketRoutes.Answer a) {
        return new String(a.body(), StandardCharsets.UTF_8);
    }

    @Test
    void aPointReadAnswerIsPlain() {
        String body = text(BucketRoutes.Answer.json(200, doc("5E+1", "1E-7", "1E+21")));
        assertThat(body).contains("\"sum\":50,", "\"min\":0.0000001,", "\"max\":1000000000000000000000,");
        assertThat(EXPONENT.matcher(body).find()).as(body).isFalse();
    }

    @Test
    void aTreeOfDocumentsKeepsTheScaleAndIsPlain() {
        var tree = BucketRoutes.JSON.createObjectNode();
        tree.putArray("buckets").add(BucketRoutes.JSON.valueToTree(doc("50.00", "0.10", "1.0E+3")));
        String body = text(BucketRoutes.Answer.json(200, tree));
        assertThat(body).contains("\"sum\":50.00,", "\"min\":0.10,", "\"max\":1000,");
        assertThat(EXPONENT.matcher(body).find()).as(body).isFalse();
    }

    @Test
    void aRollupIsPlain() {
        Requests.Range r = new Requests.Range("d|e", null, "g", TimeUnit.DAY, 1, 3, GradeStatus.UNRECORDED);
        String body = text(BucketRoutes.Answer.json(200, BucketRoutes.rollupBody(r,
                List.of(doc("25.00", "1E+1", "2E+1"), doc("25.00", "3E-8", "4E+1")))));
        assertThat(body).contains("\"sum\":50.00,", "\"min\":0.00000003,", "\"max\":40}");
        assertThat(EXPONENT.matcher(body).find()).as(body).isFalse();
    }
}
