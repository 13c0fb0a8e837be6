package io.tally.testsupport.truth;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.tally.loadgen.rules.Rule;
import io.tally.loadgen.truth.BucketValue;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.model.BucketDocument;
import io.tally.model.EntityBucketLayout;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeoutException;
import java.util.function.BiPredicate;
import java.util.function.Predicate;

/**
 * The one comparison of a container's bucket documents with what they must be: loadgen's ground truth
 * ({@link #of(GroundTruth)}) or a test's own expected documents ({@link #ofDocuments}), both per grade bucket
 * (key {@code pk|grade|unit|bucketIndex}), while the container holds entity buckets (docs/DESIGN.md). Every field of
 * every expected bucket is compared ({@link Field}; {@code updatedAt} is wall-clock time, never expected), as are
 * the stored documents' own {@code ver} and {@code ttl} and where each grade bucket is stored; missing and
 * unexpected grade buckets are reported, and a container that cannot be read gives a verdict that says so rather
 * than one that counts its buckets as wrong.
 *
 * <p>Decimals are compared by value ({@code 12.3400} equals {@code 12.34}) and exactly: a stored sum, min or max is
 * a string holding the decimal (a JSON number would be kept as a double by Cosmos), so no rounding is forgiven.
 *
 * <p>Immutable and thread-safe; options return a new judge. {@link #judge(Collection)} is a pure function
 * of the documents; {@link #judge(CosmosAsyncContainer)} only adds reading them, with retries.
 */
public final class GroundTruthJudge {
    /** The document fields a judge compares, by their JSON names. */
    public enum Field {
        GRADE("grade"), UNIT("unit"), BUCKET("bucket"), SUM("sum"), COUNT("count"), MIN("min"), MAX("max"), VER("ver"), TTL("ttl"),
        /** Of a spill page: the rule its id names. */
        RULE("rule"),
        /** Of a spill page: the page number its id names. */
        PAGE("page"),
        /** Of a grade bucket: the one document the layout puts it in (a grade bucket found twice counts twice). */
        DOCUMENT("document"),
        /** Of an hour document: its nested minute grades, an object (rule, then minute of the hour "0" to "59") or null. */
        MINUTES("minutes");

        private final String json;

        Field(String json) {
            this.json = json;
        }

        public String json() {
            return json;
        }
    }

    /** How many of each kind of difference {@link Verdict#toString()} lists. */
    public static final int SHOWN = 20;
    /** Large pages: a benchmark's container holds 100k+ buckets, and each page is a round trip to a busy endpoint. */
    private static final int PAGE_SIZE = 5_000;
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

    private final Map<String, BucketDocument> expected;
    /** Rule name -> its retention in seconds (null: none), over every expected bucket, also ones a selection left out. */
    private final Map<String, Integer> ruleTtl;
    /**
     * Hours ({@code pk|hour|hourIndex}) whose expected unqualified minute grades are more than an hour keeps inline: those
     * live in their minute documents. Every other hour nests its minutes.
     */
    private final Set<String> minutesMovedOut;
    private final String source;
    private final Predicate<String> extraIgnored;
    private final String extraIgnoredWhy;
    private final int readAttempts;
    private final Duration firstBackoff;
    /** The newest rules generation a document's {@code ver} may carry above its grade updates (docs/DESIGN.md, "Rules that change"). */
    private long maxGeneration;
    /**
     * Per grade ({@code rule/unit}) the generation that started counting its current version, when documents may come
     * from several generations; null otherwise. A grade bucket in a document of an older generation than that is of a
     * retired version (or a removed grade): not compared, not extra, only part of the document's {@code ver}; in a
     * document of the newest generation it must not be at all.
     */
    private Map<String, Long> since;

    private GroundTruthJudge(Map<String, BucketDocument> expected, Map<String, Integer> ruleTtl, String source,
                             Predicate<String> extraIgnored, String extraIgnoredWhy, int readAttempts, Duration firstBackoff) {
        this.expected = expected;
        this.ruleTtl = ruleTtl;
        this.minutesMovedOut = minutesMovedOut(expected.values());
        this.source = source;
        this.extraIgnored = extraIgnored;
        this.extraIgnoredWhy = extraIgnoredWhy;
        this.readAttempts = readAttempts;
        this.firstBackoff = firstBackoff;
    }

    /**
     * Loadgen's ground truth as the documents the pipeline must hold: per bucket the aggregations its rule
     * lists (the others absent), {@code count}, {@code ver} = count (the pipeline's {@code ver} counts the
     * deltas applied, one per counted event), {@code ttl} = the rule's retention in seconds (an entity bucket's is
     * the longest of the grades it holds), and grade, unit
     * and bucket start from the id. Derived here, not with the pipeline's classes, so a shared bug cannot
     * hide.
     */
    public static GroundTruthJudge of(GroundTruth truth) {
        Map<String, Rule> rules = new TreeMap<>();
        truth.rules().rules().forEach(r -> rules.put(r.name(), r));
        Map<String, BucketDocument> out = new TreeMap<>();
        truth.buckets().forEach((pk, ids) -> ids.forEach((id, v) -> out.put(pk + "|" + id, expectedDocument(pk, id, v, rules))));
        return expecting(out, "ground truth");
    }

    /**
     * Documents a test computed itself (a synthetic stream of absolute bucket updates): each must be stored
     * with exactly these values, {@code updatedAt} excepted, and nothing else.
     */
    public static GroundTruthJudge ofDocuments(Collection<BucketDocument> documents) {
        Map<String, BucketDocument> out = new TreeMap<>();
        documents.forEach(d -> out.put(d.pk() + "|" + d.id(), d));
        return expecting(out, "expected documents");
    }

    private static GroundTruthJudge expecting(Map<String, BucketDocument> out, String source) {
        Map<String, Integer> ruleTtl = new TreeMap<>();
        for (BucketDocument d : out.values()) {
            String rule = d.grade().split(":", 2)[0]; // a rule name never holds ':'
            Integer had = ruleTtl.get(rule);
            ruleTtl.put(rule, had == null ? d.ttl() : d.ttl() == null ? had : Integer.valueOf(Math.max(had, d.ttl())));
        }
        return new GroundTruthJudge(Collections.unmodifiableMap(out), Collections.unmodifiableMap(ruleTtl), source, k -> false, null,
                5, Duration.ofSeconds(2));
    }

    static BucketDocument expectedDocument(String pk, String id, BucketValue v, Map<String, Rule> rules) {
        // id = grade|unit|index, split from the right: a qualifier value inside the grade may hold any character,
        // a rule name ([a-z0-9-]+) never holds ':'.
        int unitAt = id.lastIndexOf('|', id.lastIndexOf('|') - 1);
        String grade = id.substring(0, unitAt);
        String unit = id.substring(unitAt + 1, id.lastIndexOf('|'));
        long index = Long.parseLong(id.substring(id.lastIndexOf('|') + 1));
        int colon = grade.indexOf(':');
        Rule rule = rules.get(colon < 0 ? grade : grade.substring(0, colon));
        if (rule == null) throw new IllegalArgumentException("the ground truth has bucket " + pk + "|" + id + " of no rule it lists");
        Set<Rule.Aggregation> aggs = rule.aggregations();
        return new BucketDocument(pk, id, grade, unit, bucketStart(unit, index).toString(),
                aggs.contains(Rule.Aggregation.SUM) ? v.sum() : null, v.count(),
                aggs.contains(Rule.Aggregation.MIN) ? v.min() : null, aggs.contains(Rule.Aggregation.MAX) ? v.max() : null,
                v.count(), (int) Math.min(Integer.MAX_VALUE, rule.retention().toSeconds()), null);
    }

    /** Start of bucket {@code index} of {@code unit}: whole units since 1970-01-01T00:00Z, months by the calendar. */
    static Instant bucketStart(String unit, long index) {
        return switch (unit) {
            case "minute" -> Instant.ofEpochSecond(index * 60);
            case "hour" -> Instant.ofEpochSecond(index * 3_600);
            case "day" -> Instant.ofEpochSecond(index * 86_400);
            case "month" -> ZonedDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).plusMonths(index).toInstant();
            default -> throw new IllegalArgumentException("unknown unit " + unit);
        };
    }

    /**
     * The hours past {@link EntityBucketLayout#MAX_INLINE_MINUTE_GRADES} unqualified minute grades (rule x minute) by the
     * expected grade buckets: the layout decides by an hour's final contents, which is what they are.
     */
    private static Set<String> minutesMovedOut(Collection<BucketDocument> expected) {
        Map<String, Integer> perHour = new TreeMap<>();
        for (BucketDocument d : expected) {
            if (!"minute".equals(d.unit()) || d.grade().indexOf(':') >= 0) continue;
            Long index = index(d.id().substring(d.id().lastIndexOf('|') + 1));
            if (index != null) perHour.merge(hourKey(d.pk(), index), 1, Integer::sum);
        }
        Set<String> out = new TreeSet<>();
        perHour.forEach((hour, n) -> {
            if (n > EntityBucketLayout.MAX_INLINE_MINUTE_GRADES) out.add(hour);
        });
        return Collections.unmodifiableSet(out);
    }

    /** The hour document ({@code pk|hour|hourIndex}) holding minute {@code minuteIndex}'s unqualified grades, or counting them. */
    private static String hourKey(String pk, long minuteIndex) {
        return pk + "|hour|" + Math.floorDiv(minuteIndex, 60);
    }

    /** Where the layout puts the unqualified grades of minute {@code minuteIndex}: its hour, or its own minute document. */
    private String minuteHome(String pk, long minuteIndex) {
        String hour = hourKey(pk, minuteIndex);
        return minutesMovedOut.contains(hour) ? pk + "|minute|" + minuteIndex : hour;
    }

    private static Long index(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    // --- options --------------------------------------------------------------------------------

    /**
     * Only the expected buckets {@code include} selects (by pk and id) are expected; the container holding
     * any other is an extra document. For a container that must hold a part of the truth, e.g. a replay of
     * a range holds only the buckets wholly inside it.
     */
    public GroundTruthJudge restrictedTo(BiPredicate<String, String> include) {
        Map<String, BucketDocument> out = new TreeMap<>();
        expected.forEach((k, d) -> {
            if (include.test(d.pk(), d.id())) out.put(k, d);
        });
        return new GroundTruthJudge(Collections.unmodifiableMap(out), ruleTtl, source + " (a selection)", extraIgnored, extraIgnoredWhy,
                readAttempts, firstBackoff).generations(maxGeneration);
    }

    /**
     * Documents of {@code domain} (pk {@code domain|...}) that the truth does not expect are not reported as
     * extra. For traffic a run adds on purpose beside loadgen's, which the truth cannot know about (a
     * benchmark's freshness probe); its expected buckets, if any, are still compared.
     */
    public GroundTruthJudge ignoringExtraInDomain(String domain) {
        String prefix = domain + "|";
        return new GroundTruthJudge(expected, ruleTtl, source, extraIgnored.or(k -> k.startsWith(prefix)),
                (extraIgnoredWhy == null ? "" : extraIgnoredWhy + ", ") + "domain " + domain, readAttempts, firstBackoff).generations(maxGeneration);
    }

    /** Reads up to {@code attempts} times, waiting {@code firstBackoff}, then twice as long each time (default 5 from 2 s: ~30 s). */
    public GroundTruthJudge withReadRetries(int attempts, Duration firstBackoff) {
        if (attempts < 1) throw new IllegalArgumentException("attempts must be at least 1");
        return new GroundTruthJudge(expected, ruleTtl, source, extraIgnored, extraIgnoredWhy, attempts, firstBackoff).generations(maxGeneration);
    }

    /**
     * Documents may have been written under rules generations up to {@code newest}: a document's {@code ver} is then its
     * generation times 2^40 plus its grade updates, and the updates are what is compared (default 0: no generation).
     */
    public GroundTruthJudge acrossRulesGenerations(long newest, Map<String, Long> sinceByGrade) {
        return new GroundTruthJudge(expected, ruleTtl, source, extraIgnored, extraIgnoredWhy, readAttempts, firstBackoff)
                .generations(newest, sinceByGrade);
    }

    private GroundTruthJudge generations(long newest) {
        return generations(newest, since);
    }

    private GroundTruthJudge generations(long newest, Map<String, Long> sinceByGrade) {
        this.maxGeneration = newest;
        this.since = sinceByGrade == null ? null : Map.copyOf(sinceByGrade);
        return this;
    }

    /**
     * Whether a grade bucket of {@code rule} in {@code unit}, stored in {@code doc}, is of the version counted now; one
     * that is not counts toward its document's {@code ver} only, and is a difference in a document of the newest
     * generation (which must have shed it).
     */
    private boolean current(String rule, String unit, JsonNode doc, String docKey, List<Difference> out) {
        if (since == null) return true;
        long generation = doc.path("ver").asLong() >>> GENERATION_SHIFT;
        Long from = since.get(rule + "/" + unit);
        if (from != null && from <= generation) return true;
        if (generation >= maxGeneration) {
            out.add(new Difference(docKey, Field.DOCUMENT, "no value of " + rule + "/" + unit + " (retired before generation "
                    + generation + ")", "a value"));
        }
        return false;
    }

    private static final int GENERATION_SHIFT = 40;

    /** A document's own {@code ver}: its grade updates below bit 40, a rules generation up to {@link #maxGeneration} above. */
    private void documentVer(String key, long updates, JsonNode doc, List<Difference> out) {
        JsonNode have = doc.get(Field.VER.json());
        if (have == null || !have.isIntegralNumber()) {
            out.add(new Difference(key, Field.VER, Long.toString(updates), show(have)));
            return;
        }
        long ver = have.longValue();
        long generation = ver >>> GENERATION_SHIFT;
        long held = ver & ((1L << GENERATION_SHIFT) - 1);
        if (generation > maxGeneration || held != updates) {
            out.add(new Difference(key, Field.VER, updates + (maxGeneration > 0 ? " (generation <= " + maxGeneration + ")" : ""),
                    held + (generation > 0 ? " (generation " + generation + ")" : "")));
        }
    }

    /** The expected documents by {@code pk|id}. */
    public Map<String, BucketDocument> expected() {
        return expected;
    }

    // --- judging --------------------------------------------------------------------------------

    /**
     * Compares the documents a container holds (entity buckets, as Cosmos returns them, system fields and all) with
     * the expected grade buckets. Each stored document is taken apart into the grade buckets it holds, as the read
     * API shows them ({@code ver} = the grade's count), by reading its JSON here rather than through the document
     * model's classes, so a bug shared with the pipeline cannot hide. Beside every grade bucket's fields it checks
     * where each one lives (inline, or on the spill page its qualifier value hashes to once the rule spilled; an
     * unqualified minute grade nested in its hour, or in its minute document once the hour's expected minute grades
     * pass {@link EntityBucketLayout#MAX_INLINE_MINUTE_GRADES}; and only once) and each document's own {@code ver} and
     * {@code ttl}. An hour's {@code ver} and {@code ttl} cover its minutes' unqualified grades wherever they are stored:
     * it counts every grade update applied to its entity bucket, and a misplaced grade is one difference (its document), not two.
     */
    public Verdict judge(Collection<JsonNode> stored) {
        Map<String, JsonNode> mains = new TreeMap<>();
        Map<String, List<JsonNode>> pagesByMain = new TreeMap<>();
        List<String> extra = new ArrayList<>();
        for (JsonNode doc : stored) {
            String pk = doc.path("pk").asText("(no pk)");
            String id = doc.path("id").asText("(no id)");
            if (pk.equals("_tally") && id.equals("rules")) continue; // the deployment's rules record (docs/DESIGN.md), not a bucket
            String[] parts = id.split("\\|", -1);
            if (parts.length == 2) {
                mains.put(pk + "|" + id, doc);
            } else if (parts.length == 4) {
                pagesByMain.computeIfAbsent(pk + "|" + parts[0] + "|" + parts[1], k -> new ArrayList<>()).add(doc);
            } else if (!extraIgnored.test(pk + "|" + id)) {
                extra.add(pk + "|" + id); // not an entity bucket: a grade document of the old layout, or garbage
            }
        }
        Map<String, List<Placed>> views = new TreeMap<>();
        List<Difference> differences = new ArrayList<>();
        Set<String> entityBuckets = new TreeSet<>(mains.keySet());
        entityBuckets.addAll(pagesByMain.keySet());
        Map<String, Held> mainsHold = new TreeMap<>();
        Map<String, Held> inMinuteDocuments = new TreeMap<>(); // hour key -> its minutes' unqualified grades stored outside it
        for (String bucketKey : entityBuckets) {
            JsonNode main = mains.get(bucketKey);
            List<JsonNode> pages = pagesByMain.getOrDefault(bucketKey, List.of());
            JsonNode spilled = main == null ? MissingNode.getInstance() : main.path("spilled");
            Held held = new Held();
            if (main != null) held.add(explode(bucketKey, main, spilled, views, inMinuteDocuments, differences));
            for (JsonNode page : pages) {
                Held onPage = explode(bucketKey, page, spilled, views, inMinuteDocuments, differences);
                if (spilled.has(page.path("id").asText().split("\\|", -1)[2])) held.count += onPage.count;
            }
            if (main == null) continue;
            fields(spilled).forEach(s -> held.rules.add(s.getKey())); // the main document must outlive its pages
            mainsHold.put(bucketKey, held);
        }
        inMinuteDocuments.forEach((hour, minutes) -> {
            Held held = mainsHold.get(hour);
            if (held != null) {
                held.add(minutes);
            } else {
                // the first minute grade creates its hour, which keeps counting the minutes it moved out
                differences.add(new Difference(hour, Field.VER, String.valueOf(minutes.count), "absent"));
            }
        });
        mainsHold.forEach((key, held) -> {
            documentVer(key, held.count, mains.get(key), differences);
            ttl(key, held.rules, mains.get(key), differences);
        });
        Set<String> seen = new LinkedHashSet<>();
        for (Map.Entry<String, List<Placed>> e : views.entrySet()) {
            String key = e.getKey();
            List<Placed> where = e.getValue();
            seen.add(key);
            Placed first = where.get(0);
            List<String> holders = where.stream().map(Placed::document).toList();
            if (where.size() > 1 || !first.document().equals(first.belongs())) {
                differences.add(new Difference(key, Field.DOCUMENT, "once, in " + first.belongs(), String.join(" and ", holders)));
            }
            BucketDocument want = expected.get(key);
            if (want == null) {
                if (!extraIgnored.test(key)) extra.add(key);
                continue;
            }
            compare(key, want, first.view(), differences);
        }
        List<String> missing = new ArrayList<>();
        for (String key : expected.keySet()) {
            if (!seen.contains(key)) missing.add(key);
        }
        extra.sort(null);
        differences.sort(java.util.Comparator.comparing(Difference::key).thenComparing(Difference::field));
        int wrongBuckets = (int) differences.stream().map(Difference::key).distinct().count();
        Outcome outcome = missing.isEmpty() && extra.isEmpty() && differences.isEmpty() ? Outcome.EQUAL : Outcome.WRONG;
        return new Verdict(outcome, source, expected.size(), stored.size(), List.copyOf(missing), List.copyOf(extra),
                List.copyOf(differences), wrongBuckets, extraIgnoredWhy, null, 1);
    }

    /** One grade bucket found in a stored document; {@code belongs} is the document the layout puts it in. */
    private record Placed(JsonNode view, String document, String belongs) {}

    /** What a main document must stand for: the sum of the counts and the rules of the grades it counts. */
    private static final class Held {
        long count;
        final Set<String> rules = new TreeSet<>();

        void add(Held other) {
            count += other.count;
            rules.addAll(other.rules);
        }
    }

    /** A minute of its hour as a nested key: "0" to "59", no leading zero. */
    private static final java.util.regex.Pattern MINUTE_OF_HOUR = java.util.regex.Pattern.compile("[1-5]?[0-9]");

    /**
     * Adds the grade buckets {@code doc} (the main document of entity bucket {@code bucketKey}, or one of its spill
     * pages) holds to {@code views} and returns what it holds; checks a page's {@code ver} and {@code ttl} (a main
     * document's are checked once its pages and, for an hour, its minute documents are known). {@code spilled} is the
     * main document's list of spilled rules. A minute document's unqualified grades are also added to
     * {@code inMinuteDocuments} under their hour.
     */
    private Held explode(String bucketKey, JsonNode doc, JsonNode spilled, Map<String, List<Placed>> views,
                         Map<String, Held> inMinuteDocuments, List<Difference> out) {
        String pk = doc.path("pk").asText();
        String docKey = pk + "|" + doc.path("id").asText();
        String[] id = doc.path("id").asText().split("\\|", -1);
        String at = "|" + id[0] + "|" + id[1];
        boolean page = id.length == 4;
        Long index = index(id[1]);
        Long minute = id[0].equals("minute") ? index : null;
        Long hour = !page && id[0].equals("hour") ? index : null;
        if (page) {
            text(docKey, Field.RULE, id[2], doc, out);
            number(docKey, Field.PAGE, pageNumber(id[3]), doc, out);
        }
        Held held = new Held();
        for (Map.Entry<String, JsonNode> g : fields(doc.path("grades"))) {
            String rule = g.getKey();
            held.rules.add(rule);
            String belongs = minute == null ? bucketKey : minuteHome(pk, minute);
            ObjectNode v = view(rule, doc.get("unit"), doc.get("bucket"), g.getValue());
            long count = current(rule, id[0], doc, docKey, out) ? place(views, pk + "|" + rule + at, v, docKey, belongs) : v.path("count").asLong();
            held.count += count;
            if (minute != null && !page) {
                Held outside = inMinuteDocuments.computeIfAbsent(hourKey(pk, minute), k -> new Held());
                outside.count += count;
                outside.rules.add(rule);
            }
        }
        for (Map.Entry<String, JsonNode> rule : fields(doc.path("qualified"))) {
            String r = rule.getKey();
            held.rules.add(r);
            int pages = spilled.path(r).asInt(0);
            for (Map.Entry<String, JsonNode> q : fields(rule.getValue())) {
                String grade = r + ":" + q.getKey();
                String belongs = pages > 0 ? bucketKey + "|" + r + "|" + EntityBucketLayout.pageOf(q.getKey(), pages) : bucketKey;
                ObjectNode v = view(grade, doc.get("unit"), doc.get("bucket"), q.getValue());
                held.count += current(r, id[0], doc, docKey, out) ? place(views, pk + "|" + grade + at, v, docKey, belongs) : v.path("count").asLong();
            }
        }
        JsonNode minutes = doc.get("minutes");
        if (hour != null) {
            nested(pk, docKey, hour, doc, views, held, out);
        } else if (minutes != null && !minutes.isNull()) {
            out.add(new Difference(docKey, Field.MINUTES, "absent", show(minutes))); // only an hour's main document nests minutes
        }
        if (page) {
            documentVer(docKey, held.count, doc, out);
            ttl(docKey, held.rules, doc, out);
        }
        return held;
    }

    /**
     * The unqualified minute grades an hour's main document nests ({@code {"minutes": {rule: {"17": grade}}}}), into
     * {@code views} as minute grade buckets and into what the hour holds. An hour holding any must name its own unit and
     * bucket rightly: a range query finds nested minutes by their hour's.
     */
    private void nested(String pk, String docKey, long hour, JsonNode doc, Map<String, List<Placed>> views, Held held,
                        List<Difference> out) {
        JsonNode nested = doc.get("minutes");
        if (nested == null || nested.isNull()) return;
        if (!nested.isObject()) {
            out.add(new Difference(docKey, Field.MINUTES, "an object or null", show(nested)));
            return;
        }
        boolean any = false;
        for (Map.Entry<String, JsonNode> rule : fields(nested)) {
            String r = rule.getKey();
            if (!rule.getValue().isObject()) {
                out.add(new Difference(docKey, Field.MINUTES, r + ": an object of minutes", r + ": " + show(rule.getValue())));
                continue;
            }
            held.rules.add(r);
            for (Map.Entry<String, JsonNode> m : fields(rule.getValue())) {
                if (!MINUTE_OF_HOUR.matcher(m.getKey()).matches()) {
                    out.add(new Difference(docKey, Field.MINUTES, r + ": minutes 0 to 59", r + ": " + m.getKey()));
                    continue;
                }
                long minute = hour * 60 + Integer.parseInt(m.getKey());
                String bucket = bucketStart("minute", minute).toString();
                ObjectNode v = view(r, TextNode.valueOf("minute"), TextNode.valueOf(bucket), m.getValue());
                held.count += current(r, "minute", doc, docKey, out)
                        ? place(views, pk + "|" + r + "|minute|" + minute, v, docKey, minuteHome(pk, minute)) : v.path("count").asLong();
                any = true;
            }
        }
        if (any) {
            text(docKey, Field.UNIT, "hour", doc, out);
            text(docKey, Field.BUCKET, bucketStart("hour", hour).toString(), doc, out);
        }
    }

    private static long place(Map<String, List<Placed>> views, String key, ObjectNode view, String document, String belongs) {
        views.computeIfAbsent(key, k -> new ArrayList<>(1)).add(new Placed(view, document, belongs));
        return view.path("count").asLong();
    }

    /**
     * A grade bucket as the read API shows it: its document's unit and bucket (a nested minute's own), the grade's
     * values, ver = its count.
     */
    private static ObjectNode view(String grade, JsonNode unit, JsonNode bucket, JsonNode aggregate) {
        ObjectNode v = JsonNodeFactory.instance.objectNode();
        v.put("grade", grade);
        if (unit != null) v.set("unit", unit);
        if (bucket != null) v.set("bucket", bucket);
        if (aggregate.isArray()) { // [count, sum, min, max], trailing absent ones left out (docs/DESIGN.md)
            String[] fields = {"count", "sum", "min", "max"};
            for (int i = 0; i < fields.length && i < aggregate.size(); i++) {
                if (!aggregate.get(i).isNull()) v.set(fields[i], aggregate.get(i));
            }
        }
        if (v.has("count")) v.set("ver", v.get("count"));
        return v;
    }

    /**
     * A document holding grades of {@code rules} must have the longest retention among them as its ttl (absent when
     * none has one). Not checked when no rule is known: its grades are all extra, reported as such.
     */
    private void ttl(String docKey, Set<String> rules, JsonNode doc, List<Difference> out) {
        boolean known = false;
        Integer max = null;
        for (String r : rules) {
            if (!ruleTtl.containsKey(r)) continue;
            known = true;
            Integer ttl = ruleTtl.get(r);
            if (ttl != null && (max == null || ttl > max)) max = ttl;
        }
        if (known) number(docKey, Field.TTL, max == null ? null : BigDecimal.valueOf(max), doc, out);
    }

    private static BigDecimal pageNumber(String s) {
        try {
            return new BigDecimal(s);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static Iterable<Map.Entry<String, JsonNode>> fields(JsonNode n) {
        return n.isObject() ? n::fields : List.of();
    }

    private static void compare(String key, BucketDocument want, JsonNode have, List<Difference> out) {
        text(key, Field.GRADE, want.grade(), have, out);
        text(key, Field.UNIT, want.unit(), have, out);
        text(key, Field.BUCKET, want.bucket(), have, out);
        decimal(key, Field.SUM, want.sum(), have, out);
        number(key, Field.COUNT, BigDecimal.valueOf(want.count()), have, out);
        decimal(key, Field.MIN, want.min(), have, out);
        decimal(key, Field.MAX, want.max(), have, out);
        number(key, Field.VER, BigDecimal.valueOf(want.ver()), have, out);
    }

    private static void text(String key, Field f, String want, JsonNode doc, List<Difference> out) {
        JsonNode have = doc.get(f.json());
        boolean absent = have == null || have.isNull();
        if (want == null ? !absent : absent || !have.isTextual() || !have.asText().equals(want)) {
            out.add(new Difference(key, f, want == null ? "absent" : want, show(have)));
        }
    }

    /**
     * {@code want} null: the field must be absent (a rule's aggregation it does not list, a document without ttl), left
     * out of the document rather than null (the one document shape, docs/DESIGN.md).
     */
    private static void number(String key, Field f, BigDecimal want, JsonNode doc, List<Difference> out) {
        JsonNode have = doc.get(f.json());
        boolean ok = want == null ? have == null : have != null && have.isNumber() && sameNumber(want, have);
        if (!ok) out.add(new Difference(key, f, want == null ? "absent" : want.toPlainString(), show(have)));
    }

    private static boolean sameNumber(BigDecimal want, JsonNode have) {
        return have.isIntegralNumber() && have.decimalValue().compareTo(want) == 0;
    }

    /**
     * A sum, min or max: stored as a string holding the exact decimal (Cosmos would keep a JSON number as a double), equal
     * by value ({@code 12.3400} equals {@code 12.34}); {@code want} null: absent.
     */
    private static void decimal(String key, Field f, BigDecimal want, JsonNode doc, List<Difference> out) {
        JsonNode have = doc.get(f.json());
        boolean ok = want == null ? have == null : have != null && have.isTextual() && sameDecimal(want, have.textValue());
        if (!ok) out.add(new Difference(key, f, want == null ? "absent" : want.toPlainString(), show(have)));
    }

    private static boolean sameDecimal(BigDecimal want, String have) {
        try {
            return new BigDecimal(have).compareTo(want) == 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static String show(JsonNode v) {
        if (v == null) return "absent";
        if (v.isNull()) return "null";
        if (v.isNumber()) return v.decimalValue().toPlainString();
        return v.isTextual() ? v.asText() : v.toString();
    }

    /**
     * Reads every document of {@code container} and judges them. A read that fails with a {@link CosmosException}
     * or times out is retried with exponential backoff; if every attempt fails the verdict is
     * {@link Outcome#COULD_NOT_READ}. A container that does not exist (404) holds nothing.
     */
    public Verdict judge(CosmosAsyncContainer container) throws InterruptedException {
        return judge(() -> readAll(container));
    }

    /** What reads a whole container; throws on failure. */
    @FunctionalInterface
    public interface ContainerReader {
        Collection<JsonNode> read();
    }

    /** {@link #judge(CosmosAsyncContainer)} with another way of reading: the retry and classification alone. */
    public Verdict judge(ContainerReader reader) throws InterruptedException {
        Duration wait = firstBackoff;
        RuntimeException last = null;
        for (int attempt = 1; attempt <= readAttempts; attempt++) {
            if (attempt > 1) {
                Thread.sleep(wait.toMillis());
                wait = wait.multipliedBy(2);
            }
            Collection<JsonNode> docs;
            try {
                docs = reader.read();
            } catch (RuntimeException e) {
                if (!isReadFailure(e)) throw e; // a bug in the test or the judge, not the store: no verdict hides it
                last = e;
                continue;
            }
            Verdict v = judge(docs);
            return attempt == 1 ? v : v.afterAttempts(attempt);
        }
        return new Verdict(Outcome.COULD_NOT_READ, source, expected.size(), 0, List.of(), List.of(), List.of(), 0, extraIgnoredWhy,
                describe(last), readAttempts);
    }

    /** A CosmosException or a timeout anywhere in the cause chain: the store did not answer, whatever wrapped it. */
    static boolean isReadFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CosmosException || t instanceof TimeoutException) return true;
        }
        return false;
    }

    private static String describe(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CosmosException c) {
                return "CosmosException " + c.getStatusCode() + ":" + c.getSubStatusCode() + " " + firstLine(c.getShortMessage());
            }
            if (t instanceof TimeoutException) return "no page within " + READ_TIMEOUT.toSeconds() + " s";
        }
        return String.valueOf(e);
    }

    private static String firstLine(String s) {
        if (s == null) return "";
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /**
     * Every document, page by page. The timeout is per page, not for the whole read: a container of a full benchmark
     * run at many rules (hundreds of thousands of documents) takes the local endpoint minutes to page through, and a
     * read that keeps moving is not a store that does not answer.
     */
    private static Collection<JsonNode> readAll(CosmosAsyncContainer container) {
        try {
            List<JsonNode> docs = container.queryItems("SELECT * FROM c", new CosmosQueryRequestOptions(), JsonNode.class)
                    .byPage(PAGE_SIZE).timeout(READ_TIMEOUT).flatMapIterable(FeedResponse::getResults).collectList().block();
            return docs == null ? List.of() : docs;
        } catch (CosmosException e) {
            if (e.getStatusCode() == 404) return List.of(); // not created yet: the pipeline has written nothing
            throw e;
        }
    }

    /**
     * Polls until the container equals the expected documents or {@code timeout} passes; returns the last verdict
     * (equal, wrong or could not read) for the caller to assert on or report.
     */
    public Verdict awaitEqual(CosmosAsyncContainer container, Duration timeout, Duration pause) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Verdict v = judge(container);
        while (!v.equal() && System.nanoTime() < deadline) {
            Thread.sleep(pause.toMillis());
            v = judge(container);
        }
        return v;
    }

    // --- the verdict ----------------------------------------------------------------------------

    public enum Outcome {
        /** Every expected bucket stored with every field right, nothing else stored. */
        EQUAL,
        /** The container was read and differs: missing, extra or wrong buckets. */
        WRONG,
        /** Every read attempt failed; nothing is known about the buckets. */
        COULD_NOT_READ
    }

    /** One field of one bucket that differs; values as plain text ("absent" for a field that is not there). */
    public record Difference(String key, Field field, String expected, String actual) {
        @Override
        public String toString() {
            return key + " " + field.json() + ": expected " + expected + ", stored " + actual;
        }
    }

    /**
     * The outcome of one comparison.
     *
     * @param source         what was expected ("ground truth", "expected documents")
     * @param expected       how many documents were expected
     * @param stored         how many the container held (0 when it could not be read)
     * @param missing        grade bucket keys ({@code pk|grade|unit|bucketIndex}) expected but not stored, sorted
     * @param extra          grade bucket keys stored but not expected, and {@code pk|id} of stored documents that are no
     *                       entity bucket, sorted (ignored domains left out)
     * @param differences    every differing field of every stored expected grade bucket and of every stored document,
     *                       sorted by key
     * @param wrongBuckets   how many grade buckets and documents have at least one difference
     * @param extraIgnored   the ignored domains, or null
     * @param readError      why the container could not be read, or null
     * @param attempts       read attempts this verdict took
     */
    public record Verdict(Outcome outcome, String source, int expected, int stored, List<String> missing, List<String> extra,
                          List<Difference> differences, int wrongBuckets, String extraIgnored, String readError, int attempts) {
        public Verdict {
            Objects.requireNonNull(outcome, "outcome");
        }

        public boolean equal() {
            return outcome == Outcome.EQUAL;
        }

        public boolean wrong() {
            return outcome == Outcome.WRONG;
        }

        public boolean couldNotRead() {
            return outcome == Outcome.COULD_NOT_READ;
        }

        /** Documents that differ from the expectation: missing + wrong + extra. 0 unless {@link #wrong()}. */
        public int differing() {
            return missing.size() + wrongBuckets + extra.size();
        }

        Verdict afterAttempts(int n) {
            return new Verdict(outcome, source, expected, stored, missing, extra, differences, wrongBuckets, extraIgnored, readError, n);
        }

        /** One line, counts only: for progress logs and reports. */
        public String summary() {
            String retried = attempts > 1 ? " (read on attempt " + attempts + ")" : "";
            return switch (outcome) {
                case EQUAL -> "all " + expected + " buckets equal the " + source + retried;
                case WRONG -> differing() + " of " + expected + " buckets differ from the " + source + ": " + missing.size()
                        + " missing, " + wrongBuckets + " wrong, " + extra.size() + " extra; " + stored + " documents stored" + retried;
                case COULD_NOT_READ -> "could not read the container in " + attempts + " attempts (" + readError
                        + "); nothing known about the " + expected + " expected buckets";
            };
        }

        /** The summary and the first {@link #SHOWN} of each kind of difference: for assertion messages. */
        @Override
        public String toString() {
            return describe(SHOWN);
        }

        /** The summary and the first {@code shown} missing keys, wrong fields and extra keys, one a line. */
        public String describe(int shown) {
            if (outcome != Outcome.WRONG) return summary();
            StringBuilder s = new StringBuilder(summary());
            if (extraIgnored != null) s.append(" (extra documents of ").append(extraIgnored).append(" not counted)");
            list(s, "missing", missing, shown);
            list(s, "wrong fields", differences, shown);
            list(s, "extra", extra, shown);
            return s.toString();
        }

        private static void list(StringBuilder s, String what, List<?> items, int shown) {
            if (items.isEmpty()) return;
            s.append("\n  ").append(what).append(items.size() > shown ? " (first " + shown + " of " + items.size() + ")" : "").append(':');
            for (Object o : items.subList(0, Math.min(shown, items.size()))) s.append("\n    ").append(o);
        }
    }
}
