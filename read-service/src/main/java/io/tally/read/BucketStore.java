package io.tally.read;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.SqlParameter;
import com.azure.cosmos.models.SqlQuerySpec;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.tally.model.Aggregate;
import io.tally.model.BucketDocument;
import io.tally.model.BucketId;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketLayout;
import io.tally.model.GradeId;
import io.tally.model.TimeUnit;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Every Cosmos call of the read path, all scoped to one logical partition and all parameterized:
 * no request value is ever spliced into query text. Each method returns a cold Mono; nothing blocks.
 * The SDK emits on its own threads; callers only map and serialize.
 *
 * <p>The container holds entity buckets ({@link EntityBucket}: every grade of an entity, unit and bucket in one
 * document); what this class returns is the per-grade view the API has always shown ({@link BucketDocument}). A
 * grade's bucket is one point read of its entity bucket, or of the spill page holding it when its rule spilled in
 * that bucket (a second read, for hot entities only). A range query projects only the asked grade, so a range over
 * a document of many grades returns a few bytes per bucket.
 *
 * <p>An unqualified minute grade lives in its hour document ({@code minutes}) while that hour nests its minutes, else
 * (an hour past {@link EntityBucketLayout#MAX_INLINE_MINUTE_GRADES} minute grades, or written before minutes nested)
 * in its minute document. A point read reads the hour first and the minute document only when the hour does not nest;
 * a range runs {@link #MINUTES_SQL} over the hours and {@link #RANGE_SQL} over the minute documents side by side and
 * merges them by bucket. Qualified minute grades are always in minute documents.
 *
 * <p>A grade's values count only in a document written under the generation of the rules record that started counting
 * the grade's version, or a later one ({@link GradeStatus#holds}): every read here decides it by the {@code ver} of the
 * document that holds the values (the hour for its nested minutes, the spill page for a spilled value), so a range
 * projects {@code ver} next to the grade and the values of an older version read as absent.
 *
 * <p>Latency bounds come from the client (end-to-end latency policy, throttling retry options, see
 * {@link ReadCosmos}); failures surface as {@link CosmosException} and are mapped by {@link Problem}.
 */
final class BucketStore {
    /**
     * One grade's buckets of one unit in [from, to), oldest first: main documents only (spill pages have a
     * {@code page}), only those holding the grade, or having spilled its rule. {@code bucket} is the ISO start.
     */
    static final String RANGE_SQL = "SELECT c.bucket, c.ttl, c.updatedAt, c.ver, c.grades[@rule] AS a FROM c "
            + "WHERE c.unit = @unit AND c.bucket >= @from AND c.bucket < @to AND NOT IS_DEFINED(c.page) "
            + "AND IS_DEFINED(c.grades[@rule]) ORDER BY c.bucket ASC";
    static final String QUALIFIED_RANGE_SQL = "SELECT c.bucket, c.ttl, c.updatedAt, c.ver, c.qualified[@rule][@qualifier] AS a, "
            + "c.spilled[@rule] AS spilled FROM c "
            + "WHERE c.unit = @unit AND c.bucket >= @from AND c.bucket < @to AND NOT IS_DEFINED(c.page) "
            + "AND (IS_DEFINED(c.qualified[@rule][@qualifier]) OR IS_DEFINED(c.spilled[@rule])) ORDER BY c.bucket ASC";

    /**
     * One unqualified minute grade's minutes nested in the hours [from, to), oldest first: only the hours that nest
     * minutes of the rule ({@code c.minutes} is null in an hour whose minutes spilled, and absent in one written before
     * minutes nested, so {@code c.minutes[@rule]} is undefined in both).
     */
    static final String MINUTES_SQL = "SELECT c.bucket, c.ttl, c.updatedAt, c.ver, c.minutes[@rule] AS m FROM c "
            + "WHERE c.unit = @unit AND c.bucket >= @from AND c.bucket < @to AND NOT IS_DEFINED(c.page) "
            + "AND IS_DEFINED(c.minutes[@rule]) ORDER BY c.bucket ASC";

    /**
     * The continuation of a page of minutes: the index of the next minute bucket to answer. A Cosmos continuation
     * cannot resume inside an hour's nested minutes, and two queries would need two of them, so a minute range pages by
     * bucket index instead: where the next page starts is all a page needs to know.
     */
    private static final String MINUTE_CURSOR = "minute:";

    /** Id of the document the readiness probe and the warm-up read; it need not exist (404 = reachable). */
    static final String PROBE_PK = "__tally__|probe";
    static final String PROBE_ID = EntityBucketId.main(TimeUnit.MINUTE, 0);

    private final CosmosAsyncContainer container;

    BucketStore(CosmosAsyncContainer container) {
        this.container = container;
    }

    /**
     * The bucket {@code id} ({@code grade|unit|bucketIndex}) of entity {@code pk}: a point read of its entity bucket,
     * and of the spill page when the grade's rule spilled there. Empty when the bucket does not exist, or its document
     * holds an older version of the grade ({@code status}).
     */
    Mono<Optional<BucketDocument>> read(String pk, String id, GradeStatus status) {
        BucketId bucket = BucketId.parse(id);
        GradeId grade = GradeId.parse(bucket.grade());
        String qualifier = grade.qualifier().orElse(null);
        if (bucket.unit() == TimeUnit.MINUTE && qualifier == null) {
            long minute = bucket.bucketIndex();
            return document(pk, EntityBucketId.main(TimeUnit.HOUR, EntityBucket.hourOf(minute))).flatMap(hour -> hour.isPresent()
                    && hour.get().nestsMinutes()
                    ? Mono.just(current(hour, status).flatMap(h -> h.minute(grade.rule(), minute)))
                    : document(pk, EntityBucketId.main(TimeUnit.MINUTE, minute))
                            .map(m -> current(m, status).flatMap(d -> d.grade(grade.rule(), null))));
        }
        return document(pk, EntityBucketId.main(bucket.unit(), bucket.bucketIndex())).flatMap(main -> {
            if (main.isEmpty()) return Mono.just(Optional.<BucketDocument>empty());
            int pages = qualifier == null ? 0 : main.get().spilledPages(grade.rule());
            if (pages == 0) return Mono.just(current(main, status).flatMap(d -> d.grade(grade.rule(), qualifier)));
            return spilled(pk, bucket.unit(), bucket.bucketIndex(), grade.rule(), qualifier, pages, status);
        });
    }

    /** The document, when it holds the current version of the grade read ({@link GradeStatus#holds}). */
    private static Optional<EntityBucket> current(Optional<EntityBucket> doc, GradeStatus status) {
        return doc.filter(d -> status.holds(d.ver()));
    }

    /** The entity bucket of {@code unit}'s bucket {@code index}: one point read; empty when there is none. */
    Mono<Optional<EntityBucket>> entityBucket(String pk, TimeUnit unit, long index) {
        return document(pk, EntityBucketId.main(unit, index));
    }

    /**
     * One page of a range query, resumed from {@code continuation} when given: a Cosmos continuation, or for an
     * unqualified minute grade the next minute to answer ({@link #nextMinute}).
     */
    Mono<Page> rangePage(Requests.Range r, int limit, Optional<String> continuation) {
        if (r.nestedMinutes()) {
            long from = continuation.map(c -> nextMinute(c).orElseThrow(() -> Problem.badRequest("continuation is not a token this API issued")))
                    .orElse(r.first());
            // one bucket past the page says whether there is a next one, and where it starts
            return minutes(r, from, limit + 1).map(found -> found.size() <= limit
                    ? new Page(found.stream().map(Minute::view).toList(), Optional.empty())
                    : new Page(found.subList(0, limit).stream().map(Minute::view).toList(),
                            Optional.of(MINUTE_CURSOR + found.get(limit).index())));
        }
        return container.queryItems(rangeQuery(r), inPartition(r.pk()), RangeRow.class)
                .byPage(continuation.orElse(null), limit)
                .next()
                .flatMap(p -> views(r, p.getResults()).map(items -> new Page(items, Optional.ofNullable(p.getContinuationToken()))))
                .defaultIfEmpty(new Page(List.of(), Optional.empty()));
    }

    /** Every bucket of a range (bounded by read.max-range-buckets, so one page of that size is the norm). */
    Mono<List<BucketDocument>> range(Requests.Range r) {
        if (r.nestedMinutes()) return minutes(r, r.first(), Integer.MAX_VALUE).map(found -> found.stream().map(Minute::view).toList());
        int pageSize = (int) Math.max(1, Math.min(r.buckets(), 1000));
        return container.queryItems(rangeQuery(r), inPartition(r.pk()), RangeRow.class)
                .byPage(pageSize)
                .concatMapIterable(FeedResponse::getResults)
                .collectList()
                .flatMap(rows -> views(r, rows));
    }

    /**
     * The next minute bucket a continuation of {@link #rangePage} names; empty when {@code continuation} is not one
     * (a Cosmos continuation, or anything else).
     */
    static OptionalLong nextMinute(String continuation) {
        if (!continuation.startsWith(MINUTE_CURSOR)) return OptionalLong.empty();
        try {
            return OptionalLong.of(Long.parseLong(continuation.substring(MINUTE_CURSOR.length())));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /**
     * The first {@code max} minute buckets of an unqualified grade from minute {@code from} to the range's end, oldest
     * first: those nested in their hours and those in minute documents (hours past the bound, or written before minutes
     * nested), both queries in flight at once, each cut at {@code max} buckets. A minute is in one place only; were it
     * in both, its hour's copy is the one stage 5 keeps writing.
     */
    private Mono<List<Minute>> minutes(Requests.Range r, long from, int max) {
        String rule = r.grade().name();
        long end = r.end();
        long firstHour = EntityBucket.hourOf(from);
        long endHour = EntityBucket.hourOf(end - 1) + 1;
        int hourPage = (int) Math.max(1, Math.min(Math.min(max, endHour - firstHour), 1000));
        int minutePage = (int) Math.max(1, Math.min(Math.min(max, end - from), 1000));
        SqlQuerySpec hours = new SqlQuerySpec(MINUTES_SQL, List.of(
                new SqlParameter("@rule", rule),
                new SqlParameter("@unit", TimeUnit.HOUR.code()),
                new SqlParameter("@from", TimeUnit.HOUR.bucketStart(firstHour).toString()),
                new SqlParameter("@to", TimeUnit.HOUR.bucketStart(endHour).toString())));
        Mono<List<Minute>> nested = container.queryItems(hours, inPartition(r.pk()), HourRow.class)
                .byPage(hourPage)
                .concatMapIterable(FeedResponse::getResults)
                .concatMapIterable(row -> row.minutes(r, from))
                .take(max)
                .collectList();
        Mono<List<Minute>> documents = container.queryItems(rangeQuery(r.from(from)), inPartition(r.pk()), RangeRow.class)
                .byPage(minutePage)
                .concatMapIterable(FeedResponse::getResults)
                .filter(row -> row.a() != null && r.status().holds(row.ver()))
                .take(max)
                .map(row -> {
                    long index = TimeUnit.MINUTE.bucketIndex(Instant.parse(row.bucket()));
                    return new Minute(index, BucketDocument.ofGrade(r.pk(), r.gradeId(), TimeUnit.MINUTE, index, row.bucket(), row.a(),
                            row.ttl(), row.updatedAt()));
                })
                .collectList();
        return Mono.zip(nested, documents).map(both -> merge(both.getT1(), both.getT2(), max));
    }

    private static List<Minute> merge(List<Minute> nested, List<Minute> documents, int max) {
        List<Minute> out = new ArrayList<>(Math.min(max, nested.size() + documents.size()));
        int i = 0;
        int j = 0;
        while (out.size() < max && (i < nested.size() || j < documents.size())) {
            if (j == documents.size() || i < nested.size() && nested.get(i).index() <= documents.get(j).index()) {
                Minute m = nested.get(i++);
                if (j < documents.size() && documents.get(j).index() == m.index()) j++;
                out.add(m);
            } else {
                out.add(documents.get(j++));
            }
        }
        return out;
    }

    /** Completes when Cosmos answers a point read at all (a 404 counts): the readiness check. */
    Mono<Void> probe() {
        return document(PROBE_PK, PROBE_ID).then();
    }

    /**
     * The rows as per-grade buckets, in order; a row of a bucket where the rule spilled is looked up in its spill
     * page (dropped when the page does not hold the qualifier value).
     */
    private Mono<List<BucketDocument>> views(Requests.Range r, List<RangeRow> rows) {
        GradeId grade = GradeId.parse(r.gradeId());
        String qualifier = grade.qualifier().orElse(null);
        return Flux.fromIterable(rows)
                .concatMap(row -> {
                    long index = r.unit().bucketIndex(Instant.parse(row.bucket()));
                    if (row.a() != null) {
                        return Mono.just(r.status().holds(row.ver())
                                ? Optional.of(BucketDocument.ofGrade(r.pk(), r.gradeId(), r.unit(), index, row.bucket(), row.a(), row.ttl(), row.updatedAt()))
                                : Optional.<BucketDocument>empty());
                    }
                    if (row.spilled() != null && qualifier != null) {
                        return spilled(r.pk(), r.unit(), index, grade.rule(), qualifier, row.spilled(), r.status());
                    }
                    return Mono.just(Optional.<BucketDocument>empty());
                })
                .filter(Optional::isPresent)
                .map(Optional::get)
                .collect(ArrayList<BucketDocument>::new, List::add)
                .map(list -> (List<BucketDocument>) list);
    }

    /** A spilled value from its page; a page has a {@code ver} of its own, which decides alone. */
    private Mono<Optional<BucketDocument>> spilled(String pk, TimeUnit unit, long index, String rule, String qualifier, int pages,
                                                   GradeStatus status) {
        String pageId = EntityBucketId.page(unit, index, rule, EntityBucketLayout.pageOf(qualifier, pages));
        return document(pk, pageId).map(page -> current(page, status).flatMap(p -> p.grade(rule, qualifier)));
    }

    private Mono<Optional<EntityBucket>> document(String pk, String id) {
        return container.readItem(id, new PartitionKey(pk), new CosmosItemRequestOptions(), EntityBucket.class)
                .map(r -> Optional.ofNullable(r.getItem()))
                .onErrorResume(CosmosException.class, e -> e.getStatusCode() == 404 && e.getSubStatusCode() == 0
                        ? Mono.just(Optional.empty()) : Mono.error(e));
    }

    private static SqlQuerySpec rangeQuery(Requests.Range r) {
        GradeId grade = GradeId.parse(r.gradeId());
        List<SqlParameter> params = new ArrayList<>(List.of(
                new SqlParameter("@rule", grade.rule()),
                new SqlParameter("@unit", r.unit().code()),
                new SqlParameter("@from", r.fromIso()),
                new SqlParameter("@to", r.toIso())));
        if (grade.qualifier().isEmpty()) return new SqlQuerySpec(RANGE_SQL, params);
        params.add(new SqlParameter("@qualifier", grade.qualifier().get()));
        return new SqlQuerySpec(QUALIFIED_RANGE_SQL, params);
    }

    private static CosmosQueryRequestOptions inPartition(String pk) {
        return new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey(pk));
    }

    /** One page of results and the Cosmos continuation of the next, if any. */
    record Page(List<BucketDocument> items, Optional<String> continuation) {}

    /** A minute bucket of a range and its index, for merging the two sources of one. */
    private record Minute(long index, BucketDocument view) {}

    /** A row of {@link #MINUTES_SQL}: one hour's nested minutes of the asked rule, by minute of the hour. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record HourRow(String bucket, Integer ttl, String updatedAt, long ver, Map<Integer, Aggregate> m) {
        /** This hour's minutes of the range from minute {@code from} on, in order; none when it holds an older version. */
        List<Minute> minutes(Requests.Range r, long from) {
            if (m == null || !r.status().holds(ver)) return List.of();
            long first = TimeUnit.MINUTE.bucketIndex(Instant.parse(bucket));
            List<Minute> out = new ArrayList<>(m.size());
            new TreeMap<>(m).forEach((minute, a) -> {
                long index = first + minute;
                if (index >= from && index < r.end() && a != null) {
                    out.add(new Minute(index, BucketDocument.ofGrade(r.pk(), r.gradeId(), TimeUnit.MINUTE, index,
                            TimeUnit.MINUTE.bucketStart(index).toString(), a, ttl, updatedAt)));
                }
            });
            return out;
        }
    }

    /**
     * A row of a range query: the asked grade's values in one bucket ({@code a}), or its rule's spill page count, and
     * the document's {@code ver} that says whether {@code a} is of the grade's current version.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record RangeRow(String bucket, Integer ttl, String updatedAt, long ver, Aggregate a, Integer spilled) {}
}
