package io.tally.loadgen.truth;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.loadgen.rules.BucketRef;
import io.tally.loadgen.rules.Rule;
import io.tally.loadgen.rules.RuleEvaluator;
import io.tally.loadgen.rules.RuleSet;
import io.tally.schemas.avro.TransactionEvent;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Currency;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the pipeline must end up with for the records Kafka acknowledged: every expected bucket value,
 * and how many records belong on the DLQ, by reason. Each record is classified from its content and
 * its Kafka record timestamp alone, in the pipeline's order:
 * <ol>
 *   <li>not decodable ({@link #onUndecodable}) → DECODE_FAILED;</li>
 *   <li>transactionId, domain or customerId blank, amount missing or negative, or currency not an ISO 4217
 *       code → INVALID;</li>
 *   <li>{@code eventTime - timestamp > futureSkew} → FUTURE;</li>
 *   <li>{@code timestamp - eventTime > longest retention of any rule} → LATE;</li>
 *   <li>transaction id seen before among accepted records → duplicate, counts once, not on the DLQ;</li>
 *   <li>otherwise counted, per rule, by {@link RuleEvaluator} (which also drops it from rules whose
 *       shorter retention it exceeds).</li>
 * </ol>
 * Boundaries are inclusive: an event exactly {@code futureSkew} ahead, or exactly a retention old, counts.
 *
 * <p>Events are logical: an order loadgen sent to the orders topic is fed here as the TransactionEvent it
 * was made from, which carries exactly its values ({@link io.tally.loadgen.OrderEvents}), so the truth
 * does not depend on which topic carried an event.
 *
 * <p>Memory: one entry per distinct transaction id (about 100 bytes) plus one per bucket. Not
 * thread-safe: feed it from one thread (the send-result handler).
 */
public final class GroundTruth {
    /** DLQ reason codes, as the pipeline's stage 1 writes them into the {@code reason} header. */
    public static final String DECODE_FAILED = "DECODE_FAILED", INVALID = "INVALID", LATE = "LATE", FUTURE = "FUTURE";

    private final RuleSet rules;
    private final RuleEvaluator evaluator;
    private final Duration futureSkew;
    private final Duration lateBound;
    private final Set<String> seen = new HashSet<>();
    private final Map<BucketRef, BucketValue> buckets = new HashMap<>();
    private final Map<String, Rule> rulesByName = new HashMap<>();
    private final Map<String, Long> dlq = new LinkedHashMap<>();
    private final Map<String, BigDecimal> amountByCustomer = new HashMap<>();
    private long accepted;
    private long duplicates;

    public GroundTruth(RuleSet rules, Duration futureSkew) {
        this.rules = rules;
        this.evaluator = new RuleEvaluator(rules);
        this.futureSkew = futureSkew;
        this.lateBound = rules.lateBound();
        rules.rules().forEach(r -> rulesByName.put(r.name(), r));
        for (String r : new String[] {DECODE_FAILED, INVALID, LATE, FUTURE}) dlq.put(r, 0L);
    }

    /** A record whose bytes do not decode as a TransactionEvent. */
    public void onUndecodable() {
        dlq.merge(DECODE_FAILED, 1L, Long::sum);
    }

    /** A record that decodes to {@code e}, acknowledged with Kafka record timestamp {@code timestamp}. */
    public void onEvent(TransactionEvent e, Instant timestamp) {
        String reason = rejection(e, timestamp);
        if (reason != null) {
            dlq.merge(reason, 1L, Long::sum);
            return;
        }
        if (!seen.add(e.getTransactionId())) {
            duplicates++;
            return;
        }
        accepted++;
        amountByCustomer.merge(e.getCustomerId(), e.getAmount(), BigDecimal::add);
        evaluator.evaluate(e, timestamp, (bucket, value) -> buckets.computeIfAbsent(bucket, k -> new BucketValue()).add(value));
    }

    private String rejection(TransactionEvent e, Instant timestamp) {
        if (blank(e.getTransactionId()) || blank(e.getDomain()) || blank(e.getCustomerId())) return INVALID;
        if (e.getAmount() == null || e.getAmount().signum() < 0 || !isoCurrency(e.getCurrency())) return INVALID;
        long aheadMillis = e.getEventTime().toEpochMilli() - timestamp.toEpochMilli();
        if (aheadMillis > futureSkew.toMillis()) return FUTURE;
        if (-aheadMillis > lateBound.toMillis()) return LATE;
        return null;
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static boolean isoCurrency(String code) {
        if (code == null || code.length() != 3) return false;
        try {
            Currency.getInstance(code);
            return true;
        } catch (IllegalArgumentException notIso) {
            return false;
        }
    }

    /** Expected DLQ records by reason (every reason present, zero included). */
    public Map<String, Long> expectedDlq() {
        return Map.copyOf(dlq);
    }

    public long expectedDlqTotal() {
        return dlq.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Records that count (unique, valid, in time). */
    public long accepted() { return accepted; }

    /** Repeats of an accepted transaction id. */
    public long duplicates() { return duplicates; }

    /** How many bucket documents the pipeline should hold. */
    public long documents() { return buckets.size(); }

    /**
     * Total amount of the accepted events per customer id, every status and no rule applied: what the
     * walking skeleton's built-in grade {@code spend} sums. Goes away with the skeleton grade.
     */
    public Map<String, BigDecimal> amountByCustomer() {
        return new TreeMap<>(amountByCustomer);
    }

    /** The expected bucket, or null: {@code pk = domain|entity}, {@code id = grade|unit|index}. */
    public BucketValue bucket(String pk, String id) {
        Map<String, BucketValue> p = buckets().get(pk);
        return p == null ? null : p.get(id);
    }

    /** Every expected bucket, sorted by pk then id. Builds the keys: meant for the end of a run. */
    public Map<String, Map<String, BucketValue>> buckets() {
        Map<String, Map<String, BucketValue>> out = new TreeMap<>();
        buckets.forEach((ref, v) -> out.computeIfAbsent(ref.pk(), k -> new TreeMap<>()).put(ref.id(), v));
        return out;
    }

    /**
     * Writes the ground truth as JSON: {@code run} (the caller's description of the run), {@code expected}
     * (counts and DLQ by reason) and {@code buckets} ({@code {pk: {id: {sum, count, min, max}}}}, each
     * bucket with only the aggregations its rule lists; decimals written plain, e.g. 12.3400).
     */
    public void write(Path file, Map<String, Object> run) throws IOException {
        if (file.getParent() != null) Files.createDirectories(file.getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        ObjectMapper json = new ObjectMapper();
        try (JsonGenerator g = json.getFactory().createGenerator(tmp.toFile(), JsonEncoding.UTF8)) {
            g.enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN.mappedFeature());
            g.useDefaultPrettyPrinter();
            g.writeStartObject();
            g.writeFieldName("run");
            json.writeValue(g, run);
            g.writeObjectFieldStart("expected");
            g.writeNumberField("accepted", accepted);
            g.writeNumberField("duplicates", duplicates);
            g.writeNumberField("documents", buckets.size());
            g.writeNumberField("dlqTotal", expectedDlqTotal());
            g.writeObjectFieldStart("dlq");
            for (Map.Entry<String, Long> e : dlq.entrySet()) g.writeNumberField(e.getKey(), e.getValue());
            g.writeEndObject();
            g.writeEndObject();
            g.writeObjectFieldStart("buckets");
            Map<String, Map<String, BucketRef>> sorted = new TreeMap<>();
            buckets.keySet().forEach(ref -> sorted.computeIfAbsent(ref.pk(), k -> new TreeMap<>()).put(ref.id(), ref));
            for (Map.Entry<String, Map<String, BucketRef>> p : sorted.entrySet()) {
                g.writeObjectFieldStart(p.getKey());
                for (Map.Entry<String, BucketRef> b : p.getValue().entrySet()) {
                    writeBucket(g, b.getKey(), rulesByName.get(b.getValue().rule()), buckets.get(b.getValue()));
                }
                g.writeEndObject();
            }
            g.writeEndObject();
            g.writeEndObject();
        }
        // Readers never see a half-written file (a test polling for it, a crashed run).
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private static void writeBucket(JsonGenerator g, String id, Rule rule, BucketValue v) throws IOException {
        Set<Rule.Aggregation> aggs = rule.aggregations();
        g.writeObjectFieldStart(id);
        if (aggs.contains(Rule.Aggregation.SUM)) g.writeNumberField("sum", v.sum());
        if (aggs.contains(Rule.Aggregation.COUNT)) g.writeNumberField("count", v.count());
        if (aggs.contains(Rule.Aggregation.MIN)) g.writeNumberField("min", v.min());
        if (aggs.contains(Rule.Aggregation.MAX)) g.writeNumberField("max", v.max());
        g.writeEndObject();
    }

    public RuleSet rules() {
        return rules;
    }
}
