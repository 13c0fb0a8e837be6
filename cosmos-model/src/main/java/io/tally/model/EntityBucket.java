package io.tally.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One entity's time bucket as stored in Cosmos: every grade of the entity in one unit and bucket, in one document
 * (or, for a qualified rule past {@link EntityBucketLayout#MAX_INLINE_QUALIFIER_VALUES} values, in that rule's spill
 * pages). Absolute values, never deltas, so every retry and replay of a write is idempotent.
 *
 * <p>JSON ({@link EntityBucketJson}):
 * <pre>{@code
 * {"pk": "demo-shop|c-42", "id": "day|20419", "unit": "day", "bucket": "2025-11-27T00:00:00Z",
 *  "ver": 17, "ttl": 3024000, "updatedAt": "...",
 *  "grades":    {"spend-per-customer": [3, "120.5000", "10.5000", "80.0000"]},
 *  "qualified": {"spend-per-customer-sku": {"sku-7": [1, "10.5000"]}},
 *  "spilled":   {"other-qualified-rule": 16}}
 * }</pre>
 * An hour document also holds its minutes' unqualified grades under {@code minutes} (rule, then minute of the hour:
 * {@code {"orders": {"17": [2]}}}), or {@code null} once they moved to minute documents ({@link EntityBucketLayout}).
 * A spill page has the same shape plus {@code rule} and {@code page}, and holds only that rule's values under
 * {@code qualified}. A grade is {@code [count, sum, min, max]}, decimals as exact strings ({@link EntityBucketJson}).
 * {@code ver} counts every grade update applied to the document (to a page: to its values), so it grows
 * with every change and a replay of the same input reaches the same {@code ver}; a writer never replaces a
 * document with a higher {@code ver}. A grade's own {@code count} is its events, the {@code ver} of its
 * {@link BucketDocument} view. {@code ttl} is the longest retention of the grades held.
 *
 * <p>Not thread-safe: mutated by one stream task (or the replay job) while it aggregates, then only read.
 */
@JsonIgnoreProperties(ignoreUnknown = true) // Cosmos adds _rid, _etag, _ts, ...
public final class EntityBucket {
    private final String pk;
    private final String id;
    private final String unit;
    private final String bucket;
    private final String rule;       // spill page: its rule; main document: null
    private final int page;          // spill page: its number; main document: -1
    private long ver;
    private Integer ttl;
    private String updatedAt;
    private final Map<String, Aggregate> grades;
    private final Map<String, Map<String, Aggregate>> qualified;
    private final Map<String, Integer> spilled;
    /**
     * An hour document's unqualified minute grades: rule, then minute of the hour (0-59). Null when its minutes live in
     * minute documents: a document of another unit, an hour whose minutes spilled ({@link EntityBucketLayout}), or an
     * hour written before minutes nested.
     */
    private Map<String, Map<Integer, Aggregate>> minutes;
    /** Bumped by every change: lets an encoder reuse what it encoded while nothing changed. */
    private int changes;
    /** The JSON tree this document was read from, while unchanged since ({@link EntityBucketJson#read(byte[])}). */
    private Object source;

    EntityBucket(String pk, String id, String unit, String bucket, String rule, int page, long ver, Integer ttl,
                 String updatedAt, Map<String, Aggregate> grades, Map<String, Map<String, Aggregate>> qualified,
                 Map<String, Integer> spilled, Map<String, Map<Integer, Aggregate>> minutes) {
        this.pk = Objects.requireNonNull(pk, "pk");
        this.id = Objects.requireNonNull(id, "id");
        this.unit = unit;
        this.bucket = bucket;
        this.rule = rule;
        this.page = page;
        this.ver = ver;
        this.ttl = ttl;
        this.updatedAt = updatedAt;
        this.grades = grades;
        this.qualified = qualified;
        this.spilled = spilled;
        this.minutes = minutes;
    }

    /**
     * For readers that let a Jackson mapper bind the document (the Cosmos SDK's reads): decimals bind straight to
     * {@link java.math.BigDecimal}, whatever the mapper does with floating-point numbers in a tree.
     */
    @JsonCreator
    static EntityBucket fromJson(@JsonProperty("pk") String pk, @JsonProperty("id") String id, @JsonProperty("unit") String unit,
                                 @JsonProperty("bucket") String bucket, @JsonProperty("rule") String rule,
                                 @JsonProperty("page") Integer page, @JsonProperty("ver") long ver, @JsonProperty("ttl") Integer ttl,
                                 @JsonProperty("updatedAt") String updatedAt, @JsonProperty("grades") Map<String, Aggregate> grades,
                                 @JsonProperty("qualified") Map<String, Map<String, Aggregate>> qualified,
                                 @JsonProperty("spilled") Map<String, Integer> spilled,
                                 @JsonProperty("minutes") Map<String, Map<Integer, Aggregate>> minutes) {
        Map<String, Map<String, Aggregate>> q = new TreeMap<>();
        if (qualified != null) qualified.forEach((r, values) -> q.put(r, new TreeMap<>(values)));
        Map<String, Map<Integer, Aggregate>> m = null;
        if (minutes != null) {
            m = new TreeMap<>();
            for (Map.Entry<String, Map<Integer, Aggregate>> e : minutes.entrySet()) m.put(e.getKey(), new TreeMap<>(e.getValue()));
        }
        return new EntityBucket(pk, id, unit, bucket, rule, page == null ? -1 : page, ver, ttl, updatedAt,
                grades == null ? new TreeMap<>() : new TreeMap<>(grades), q, spilled == null ? new TreeMap<>() : new TreeMap<>(spilled), m);
    }

    /** An empty main document of {@code unit}'s bucket {@code index}, starting at {@code bucketStart} (ISO). */
    public static EntityBucket main(String pk, TimeUnit unit, long index, String bucketStart) {
        return new EntityBucket(pk, EntityBucketId.main(unit, index), unit.code(), bucketStart, null, -1, 0, null, null,
                new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), unit == TimeUnit.HOUR ? new TreeMap<>() : null);
    }

    /** An empty spill page of {@code rule}. */
    public static EntityBucket page(String pk, TimeUnit unit, long index, String bucketStart, String rule, int page) {
        return new EntityBucket(pk, EntityBucketId.page(unit, index, rule, page), unit.code(), bucketStart, rule, page, 0,
                null, null, new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), null);
    }

    public String pk() { return pk; }
    public String id() { return id; }
    public String unit() { return unit; }
    /** ISO-8601 start of the bucket (UTC). */
    public String bucket() { return bucket; }
    /** The rule of a spill page; null for a main document. */
    public String rule() { return rule; }
    /** The page number of a spill page; -1 for a main document. */
    public int page() { return page; }
    public long ver() { return ver; }
    public Integer ttl() { return ttl; }
    public String updatedAt() { return updatedAt; }
    public boolean isPage() { return rule != null; }

    /** Unqualified grades by rule name (read-only view). */
    public Map<String, Aggregate> grades() { return Collections.unmodifiableMap(grades); }
    /** Inline qualified grades: rule name, then qualifier value (read-only view). */
    public Map<String, Map<String, Aggregate>> qualified() { return Collections.unmodifiableMap(qualified); }
    /** Rules whose values of this bucket live in spill pages, with their page count (read-only view). */
    public Map<String, Integer> spilled() { return Collections.unmodifiableMap(spilled); }
    /** Whether this is an hour document holding its minutes' unqualified grades ({@link #minutes()}). */
    public boolean nestsMinutes() { return minutes != null; }
    /**
     * An hour document's unqualified minute grades, rule then minute of the hour (read-only view); empty when it does
     * not nest its minutes.
     */
    public Map<String, Map<Integer, Aggregate>> minutes() {
        return minutes == null ? Map.of() : Collections.unmodifiableMap(minutes);
    }

    // --- aggregation (stage 5 and replay; EntityBucketMath in ingest-app decides where each delta goes) ---

    /** Adds {@code delta} to the unqualified grade {@code rule}; {@code ver} moves by its count. */
    public void addGrade(String rule, Aggregate delta, int ttlSeconds) {
        grades.merge(rule, delta, Aggregate::plus);
        counted(delta.count(), ttlSeconds);
    }

    /** Adds {@code delta} to {@code rule}'s value {@code qualifier}; {@code ver} moves by its count. */
    public void addQualified(String rule, String qualifier, Aggregate delta, int ttlSeconds) {
        qualified.computeIfAbsent(rule, r -> new TreeMap<>()).merge(qualifier, delta, Aggregate::plus);
        counted(delta.count(), ttlSeconds);
    }

    /**
     * Adds {@code delta} to the unqualified minute grade {@code rule} of this hour's minute {@code minuteOfHour};
     * {@code ver} moves by its count.
     *
     * @throws IllegalStateException when this document does not nest its minutes
     */
    public void addMinute(String rule, int minuteOfHour, Aggregate delta, int ttlSeconds) {
        if (minutes == null) throw new IllegalStateException(this + " does not nest its minutes");
        minutes.computeIfAbsent(rule, r -> new TreeMap<>()).merge(minuteOfHour, delta, Aggregate::plus);
        counted(delta.count(), ttlSeconds);
    }

    /** How many minute grades (rule × minute) this hour holds inline. */
    public int minuteGrades() {
        if (minutes == null) return 0;
        int n = 0;
        for (Map<Integer, Aggregate> m : minutes.values()) n += m.size();
        return n;
    }

    /**
     * Takes the minute grades out, to be written to their minute documents from now on; {@code ver} does not move:
     * the events stay counted by this document.
     */
    public Map<String, Map<Integer, Aggregate>> spillMinutes() {
        changed();
        Map<String, Map<Integer, Aggregate>> out = minutes == null ? Map.of() : minutes;
        minutes = null;
        return out;
    }

    /** Counts events that went to one of this main document's spill pages: its {@code ver} covers them too. */
    public void countSpilled(long count, int ttlSeconds) {
        counted(count, ttlSeconds);
    }

    /** How many values of {@code rule} this document holds inline. */
    public int qualifierValues(String rule) {
        Map<String, Aggregate> values = qualified.get(rule);
        return values == null ? 0 : values.size();
    }

    /** Pages of {@code rule} when its values of this bucket were spilled, else 0. */
    public int spilledPages(String rule) {
        Integer pages = spilled.get(rule);
        return pages == null ? 0 : pages;
    }

    /**
     * Takes {@code rule}'s inline values out and records that they live in {@code pages} spill pages from now on.
     * {@code ver} does not move: the events stay counted by this document.
     */
    public Map<String, Aggregate> spill(String rule, int pages) {
        changed();
        spilled.put(rule, pages);
        Map<String, Aggregate> values = qualified.remove(rule);
        return values == null ? Map.of() : values;
    }

    /** Puts spilled values on this page; its {@code ver} moves by their counts. */
    public void addSpilled(Map<String, Aggregate> values, int ttlSeconds) {
        values.forEach((q, a) -> addQualified(rule, q, a, ttlSeconds));
    }

    /**
     * Drops the values of every grade {@code keep} rejects, given its rule and the unit it is kept in here (an hour's
     * nested minutes: {@link TimeUnit#MINUTE}); how a document sheds grades a rules change retired. Rules whose values
     * lived in spill pages and are dropped go to {@code droppedSpills}: their pages hold the values, and their count.
     * {@code ver} does not move; the caller sets it ({@link #restartVer}).
     *
     * @return the grade updates the dropped inline values held
     */
    public long drop(java.util.function.BiPredicate<String, TimeUnit> keep, List<String> droppedSpills) {
        TimeUnit own = TimeUnit.fromCode(unit);
        long dropped = 0;
        for (var it = grades.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!keep.test(e.getKey(), own)) {
                dropped += e.getValue().count();
                it.remove();
            }
        }
        for (var it = qualified.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!keep.test(e.getKey(), own)) {
                for (Aggregate a : e.getValue().values()) dropped += a.count();
                it.remove();
            }
        }
        for (var it = spilled.keySet().iterator(); it.hasNext(); ) {
            String r = it.next();
            if (!keep.test(r, own)) {
                droppedSpills.add(r);
                it.remove();
            }
        }
        if (minutes != null) {
            for (var it = minutes.entrySet().iterator(); it.hasNext(); ) {
                var e = it.next();
                if (!keep.test(e.getKey(), TimeUnit.MINUTE)) {
                    for (Aggregate a : e.getValue().values()) dropped += a.count();
                    it.remove();
                }
            }
        }
        changed();
        return dropped;
    }

    /**
     * Sets {@code ver} and {@code ttl}: only when a document is first written under a new rules generation, whose number
     * {@code ver} carries above the grade updates (io.tally.rules.state.RulesState#verFloor), so it still only grows; the
     * {@code ttl} of the grades it still holds (null: keep the one it has, for a document left holding none).
     */
    public void restart(long ver, Integer ttl) {
        changed();
        this.ver = ver;
        if (ttl != null) this.ttl = ttl;
    }

    /**
     * Takes minute grades back into an hour whose minutes had moved out, once a rules change left few enough of them
     * ({@link EntityBucketLayout#MAX_INLINE_MINUTE_GRADES}); {@code ver} does not move, the hour counted them already.
     */
    public void nestMinutes(Map<String, Map<Integer, Aggregate>> byRule) {
        if (TimeUnit.fromCode(unit) != TimeUnit.HOUR || rule != null) throw new IllegalStateException(this + " is not an hour");
        changed();
        minutes = new TreeMap<>();
        byRule.forEach((r, m) -> minutes.put(r, new TreeMap<>(m)));
    }

    /** Whether this document holds no grade at all (an hour's moved-out minutes are not held here). */
    public boolean holdsNothing() {
        return grades.isEmpty() && qualified.isEmpty() && spilled.isEmpty() && (minutes == null || minutes.isEmpty());
    }

    /** The rules whose values this document holds, spilled and nested ones included. */
    public java.util.Set<String> rulesHeld() {
        java.util.Set<String> out = new java.util.TreeSet<>(grades.keySet());
        out.addAll(qualified.keySet());
        out.addAll(spilled.keySet());
        if (minutes != null) out.addAll(minutes.keySet());
        return out;
    }

    public void stamp(String time) {
        changed();
        this.updatedAt = time;
    }

    /** How many times this document changed since it was made or read: with its identity, what an encoder keys on. */
    int changes() {
        return changes;
    }

    Object source() {
        return source;
    }

    void source(Object tree) {
        this.source = tree;
    }

    private void changed() {
        changes++;
        source = null;
    }

    private void counted(long count, int ttlSeconds) {
        changed();
        ver += count;
        if (ttl == null || ttlSeconds > ttl) ttl = ttlSeconds;
    }

    // --- the per-grade view: what the read API answers, and what the ground truth is checked against ---

    /**
     * The bucket of grade {@code rule} (with {@code qualifier}, or null) held by this document, as the read API shows
     * one bucket: id {@code grade|unit|bucketIndex}, its values, {@code ver} = its count, the document's ttl and
     * updatedAt. Empty when this document does not hold it (a spilled rule's values are in its pages).
     */
    public Optional<BucketDocument> grade(String rule, String qualifier) {
        Aggregate a;
        if (qualifier == null) {
            a = grades.get(rule);
        } else {
            Map<String, Aggregate> values = qualified.get(rule);
            a = values == null ? null : values.get(qualifier);
        }
        return Optional.ofNullable(a).map(x -> view(EntityBucketId.parse(id), GradeId.format(rule, qualifier), x));
    }

    /**
     * The minute bucket {@code minuteIndex} (whole minutes since the epoch) of the unqualified grade {@code rule} nested
     * in this hour document, as the read API shows one bucket; empty when this document does not hold it.
     */
    public Optional<BucketDocument> minute(String rule, long minuteIndex) {
        Map<Integer, Aggregate> byMinute = minutes == null ? null : minutes.get(rule);
        Aggregate a = byMinute == null ? null : byMinute.get(minuteOfHour(minuteIndex));
        if (a == null || Math.floorDiv(minuteIndex, MINUTES_PER_HOUR) != EntityBucketId.parse(id).bucketIndex()) {
            return Optional.empty();
        }
        return Optional.of(minuteView(rule, minuteIndex, a));
    }

    /**
     * Every grade bucket this document holds, as {@link #grade} and {@link #minute} show each: unqualified first, by
     * name, then qualified, then an hour's nested minutes by rule and minute.
     */
    public List<BucketDocument> views() {
        EntityBucketId where = EntityBucketId.parse(id);
        List<BucketDocument> out = new ArrayList<>(grades.size() + qualified.size());
        grades.forEach((r, a) -> out.add(view(where, r, a)));
        qualified.forEach((r, values) -> values.forEach((q, a) -> out.add(view(where, GradeId.format(r, q), a))));
        if (minutes != null) {
            long first = where.bucketIndex() * MINUTES_PER_HOUR;
            minutes.forEach((r, byMinute) -> byMinute.forEach((m, a) -> out.add(minuteView(r, first + m, a))));
        }
        return out;
    }

    /** The minute of its hour (0-59) of minute bucket {@code minuteIndex}: the key an hour document nests it under. */
    public static int minuteOfHour(long minuteIndex) {
        return (int) Math.floorMod(minuteIndex, MINUTES_PER_HOUR);
    }

    /** The hour bucket holding minute bucket {@code minuteIndex}. */
    public static long hourOf(long minuteIndex) {
        return Math.floorDiv(minuteIndex, MINUTES_PER_HOUR);
    }

    private static final long MINUTES_PER_HOUR = 60;

    private BucketDocument minuteView(String rule, long minuteIndex, Aggregate a) {
        return BucketDocument.ofGrade(pk, rule, TimeUnit.MINUTE, minuteIndex, TimeUnit.MINUTE.bucketStart(minuteIndex).toString(),
                a, ttl, updatedAt);
    }

    private BucketDocument view(EntityBucketId where, String gradeId, Aggregate a) {
        return BucketDocument.ofGrade(pk, gradeId, where.unit(), where.bucketIndex(), bucket, a, ttl, updatedAt);
    }

    /** Coordinates for logs: never the values. */
    @Override
    public String toString() {
        return pk + BucketId.SEPARATOR + id + " ver " + ver;
    }
}
