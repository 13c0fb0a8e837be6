package io.tally.read;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.SqlParameter;
import com.azure.cosmos.models.SqlQuerySpec;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * Every Cosmos call of the read path, all scoped to one logical partition and all parameterized:
 * no request value is ever spliced into query text. Each method returns a cold Mono; nothing blocks.
 * The SDK emits on its own threads; callers only map and serialize.
 *
 * <p>Latency bounds come from the client (end-to-end latency policy, throttling retry options, see
 * {@link ReadCosmos}); failures surface as {@link CosmosException} and are mapped by {@link Problem}.
 */
final class BucketStore {
    /** One grade's buckets of one unit in [from, to), oldest first. {@code bucket} is the ISO start, as written. */
    static final String RANGE_SQL = "SELECT * FROM c WHERE c.grade = @grade AND c.unit = @unit "
            + "AND c.bucket >= @from AND c.bucket < @to ORDER BY c.bucket ASC";

    /** Id of the document the readiness probe and the warm-up read; it need not exist (404 = reachable). */
    static final String PROBE_PK = "__tally__|probe";
    static final String PROBE_ID = "probe|minute|0";

    private final CosmosAsyncContainer container;

    BucketStore(CosmosAsyncContainer container) {
        this.container = container;
    }

    /** A point read; empty when the bucket does not exist. */
    Mono<Optional<BucketDocument>> read(String pk, String id) {
        return container.readItem(id, new PartitionKey(pk), new CosmosItemRequestOptions(), BucketDocument.class)
                .map(r -> Optional.ofNullable(r.getItem()))
                .onErrorResume(CosmosException.class, e -> e.getStatusCode() == 404 && e.getSubStatusCode() == 0
                        ? Mono.just(Optional.empty()) : Mono.error(e));
    }

    /** One page of a range query, resumed from {@code continuation} when given. */
    Mono<Page> rangePage(Requests.Range r, int limit, Optional<String> continuation) {
        return container.queryItems(rangeQuery(r), inPartition(r.pk()), BucketDocument.class)
                .byPage(continuation.orElse(null), limit)
                .next()
                .map(p -> new Page(p.getResults(), Optional.ofNullable(p.getContinuationToken())))
                .defaultIfEmpty(new Page(List.of(), Optional.empty()));
    }

    /** Every bucket of a range (bounded by read.max-range-buckets, so one page of that size is the norm). */
    Mono<List<BucketDocument>> range(Requests.Range r) {
        int pageSize = (int) Math.max(1, Math.min(r.buckets(), 1000));
        return container.queryItems(rangeQuery(r), inPartition(r.pk()), BucketDocument.class)
                .byPage(pageSize)
                .concatMapIterable(FeedResponse::getResults)
                .collectList();
    }

    /**
     * The buckets whose start is {@code starts.get(unit)} for their unit: every grade's current bucket
     * in one in-partition query. The query text depends only on how many units there are.
     */
    Mono<List<BucketDocument>> current(String pk, Map<TimeUnit, String> starts, int maxItems) {
        StringBuilder sql = new StringBuilder("SELECT * FROM c WHERE ");
        List<SqlParameter> params = new ArrayList<>();
        int i = 0;
        for (Map.Entry<TimeUnit, String> e : starts.entrySet()) {
            if (i > 0) sql.append(" OR ");
            sql.append("(c.unit = @u").append(i).append(" AND c.bucket = @b").append(i).append(')');
            params.add(new SqlParameter("@u" + i, e.getKey().code()));
            params.add(new SqlParameter("@b" + i, e.getValue()));
            i++;
        }
        return container.queryItems(new SqlQuerySpec(sql.toString(), params), inPartition(pk), BucketDocument.class)
                .byPage(Math.min(maxItems + 1, 1000))
                .concatMapIterable(FeedResponse::getResults)
                .take(maxItems + 1L) // one more than allowed tells the caller it was truncated
                .collectList();
    }

    /** Completes when Cosmos answers a point read at all (a 404 counts): the readiness check. */
    Mono<Void> probe() {
        return read(PROBE_PK, PROBE_ID).then();
    }

    private static SqlQuerySpec rangeQuery(Requests.Range r) {
        return new SqlQuerySpec(RANGE_SQL, List.of(
                new SqlParameter("@grade", r.gradeId()),
                new SqlParameter("@unit", r.unit().code()),
                new SqlParameter("@from", r.fromIso()),
                new SqlParameter("@to", r.toIso())));
    }

    private static CosmosQueryRequestOptions inPartition(String pk) {
        return new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey(pk));
    }

    /** One page of results and the Cosmos continuation of the next, if any. */
    record Page(List<BucketDocument> items, Optional<String> continuation) {}

}
