package io.tally.tests.cosmos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosItemIdentity;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.SqlParameter;
import com.azure.cosmos.models.SqlQuerySpec;
import com.azure.cosmos.util.CosmosPagedFlux;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.testsupport.cosmos.CosmosControl;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * SQL queries through the SDK's query pipeline (query plan first, then the query) scoped to one
 * partition and across partitions, paging with continuations, and readMany.
 */
class CosmosQueryIT extends LocalCosmosTestBase {
    private static final int PARTITIONS = 5;
    private static final int PER_PARTITION = 30;
    private CosmosAsyncContainer items;

    @BeforeAll
    void load() {
        items = container("buckets", null);
        // Entity e<p>: buckets 0..29 with sum = bucket, count = p+1.
        Flux.range(0, PARTITIONS * PER_PARTITION)
                .flatMap(i -> {
                    int p = i / PER_PARTITION;
                    int bucket = i % PER_PARTITION;
                    ObjectNode d = doc("e" + p, "g|hour|" + bucket).put("bucket", bucket).put("sum", bucket).put("count", p + 1);
                    return items.createItem(d);
                }, 16)
                .blockLast();
    }

    private static CosmosQueryRequestOptions inPartition(String pk) {
        return new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey(pk));
    }

    @Test
    void singlePartitionQueryWithParametersWhereOrderByAndTop() {
        SqlQuerySpec q = new SqlQuerySpec(
                "SELECT TOP 3 c.id, c.bucket FROM c WHERE c.bucket >= @from AND c.bucket < @to ORDER BY c.bucket DESC",
                List.of(new SqlParameter("@from", 10), new SqlParameter("@to", 20)));
        List<JsonNode> rows = items.queryItems(q, inPartition("e2"), JsonNode.class).collectList().block();
        assertThat(rows).extracting(r -> r.get("bucket").asInt()).containsExactly(19, 18, 17);
        assertThat(rows).allSatisfy(r -> assertThat(r.has("pk")).as("projection").isFalse());

        List<JsonNode> none = items.queryItems(q, inPartition("no-such-entity"), JsonNode.class).collectList().block();
        assertThat(none).isEmpty();
    }

    @Test
    void aggregatesInOnePartition() {
        CosmosQueryRequestOptions e1 = inPartition("e1");
        assertThat(items.queryItems("SELECT VALUE SUM(c.sum) FROM c", e1, Long.class).blockFirst()).isEqualTo(435L);
        assertThat(items.queryItems("SELECT VALUE COUNT(1) FROM c WHERE c.bucket < 10", e1, Long.class).blockFirst()).isEqualTo(10L);
        JsonNode all = items.queryItems(
                "SELECT COUNT(1) AS n, SUM(c.count) AS total, MIN(c.bucket) AS lo, MAX(c.bucket) AS hi FROM c", e1, JsonNode.class)
                .blockFirst();
        assertThat(all.get("n").asInt()).isEqualTo(30);
        assertThat(all.get("total").asInt()).isEqualTo(60);
        assertThat(all.get("lo").asInt()).isEqualTo(0);
        assertThat(all.get("hi").asInt()).isEqualTo(29);
    }

    @Test
    void pagesAreLinkedByContinuationTokens() {
        SqlQuerySpec q = new SqlQuerySpec("SELECT * FROM c ORDER BY c.bucket");
        List<FeedResponse<JsonNode>> pages = items.queryItems(q, inPartition("e3"), JsonNode.class)
                .byPage(7).collectList().block();
        assertThat(pages).hasSize(5);
        assertThat(pages.subList(0, 4)).allSatisfy(p -> assertThat(p.getContinuationToken()).isNotNull());
        assertThat(pages.get(4).getContinuationToken()).isNull();
        List<Integer> buckets = new ArrayList<>();
        pages.forEach(p -> p.getResults().forEach(r -> buckets.add(r.get("bucket").asInt())));
        assertThat(buckets).containsExactlyElementsOf(IntStream.range(0, 30).boxed().toList());

        // Resume from the second page's token, as a stateless reader would.
        CosmosPagedFlux<JsonNode> resumed = items.queryItems(q, inPartition("e3"), JsonNode.class);
        FeedResponse<JsonNode> third = resumed.byPage(pages.get(1).getContinuationToken(), 7).blockFirst();
        assertThat(third.getResults()).extracting(r -> r.get("bucket").asInt()).containsExactly(14, 15, 16, 17, 18, 19, 20);
    }

    @Test
    void crossPartitionQueries() {
        CosmosQueryRequestOptions any = new CosmosQueryRequestOptions();
        List<JsonNode> top = items.queryItems("SELECT c.pk, c.bucket FROM c WHERE c.bucket = 29 ORDER BY c.pk", any, JsonNode.class)
                .collectList().block();
        assertThat(top).extracting(r -> r.get("pk").asText()).containsExactly("e0", "e1", "e2", "e3", "e4");
        assertThat(items.queryItems("SELECT VALUE COUNT(1) FROM c", any, Long.class).blockFirst())
                .isEqualTo((long) PARTITIONS * PER_PARTITION);
        List<String> paged = items.queryItems("SELECT VALUE c.id FROM c WHERE c.bucket < 2", any, String.class)
                .byPage(3).flatMapIterable(FeedResponse::getResults).collectList().block();
        assertThat(paged).hasSize(PARTITIONS * 2);
    }

    @Test
    void readManyReturnsTheItemsThatExist() {
        List<CosmosItemIdentity> ids = List.of(
                new CosmosItemIdentity(new PartitionKey("e0"), "g|hour|1"),
                new CosmosItemIdentity(new PartitionKey("e4"), "g|hour|29"),
                new CosmosItemIdentity(new PartitionKey("e2"), "g|hour|7"),
                new CosmosItemIdentity(new PartitionKey("e2"), "missing"),
                new CosmosItemIdentity(new PartitionKey("nobody"), "g|hour|1"));
        FeedResponse<JsonNode> found = items.readMany(ids, JsonNode.class).block();
        assertThat(found.getResults()).extracting(r -> r.get("pk").asText() + "/" + r.get("id").asText())
                .containsExactlyInAnyOrder("e0/g|hour|1", "e4/g|hour|29", "e2/g|hour|7");
        assertThat(found.getRequestCharge()).isGreaterThan(0);
    }

    @Test
    void queriesAreChargedByWorkAndUseTheQueryPlanPath() {
        CosmosControl.Stats before = control.stats();
        FeedResponse<JsonNode> narrow = items.queryItems("SELECT * FROM c WHERE c.bucket = 3", inPartition("e0"), JsonNode.class)
                .byPage().blockFirst();
        FeedResponse<JsonNode> wide = items.queryItems("SELECT * FROM c WHERE c.bucket = 3", new CosmosQueryRequestOptions(), JsonNode.class)
                .byPage().blockLast();
        assertThat(narrow.getRequestCharge()).isBetween(2.5, 5.0);
        assertThat(wide.getRequestCharge()).as("scans all five partitions").isGreaterThan(narrow.getRequestCharge());
        CosmosControl.Stats after = control.stats();
        assertThat(after.count("queryplan")).isGreaterThan(before.count("queryplan"));
    }

    @Test
    void aMalformedQueryIsABadRequest() {
        assertThatThrownBy(() -> items.queryItems("SELEC * FROM c", inPartition("e0"), JsonNode.class).collectList().block())
                .isInstanceOfSatisfying(CosmosException.class, e -> assertThat(e.getStatusCode()).isEqualTo(400));
    }
}
