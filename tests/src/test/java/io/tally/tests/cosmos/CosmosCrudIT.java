package io.tally.tests.cosmos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.CosmosContainerResponse;
import com.azure.cosmos.models.CosmosDatabaseResponse;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosItemResponse;
import com.azure.cosmos.models.CosmosPatchItemRequestOptions;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.config.Config;
import io.tally.cosmos.CosmosClients;
import io.tally.cosmos.CosmosSettings;
import io.tally.model.Aggregate;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import io.tally.model.TimeUnit;
import io.tally.testsupport.cosmos.CosmosControl.Fault;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** Point operations, conditional writes and patch through the SDK, with their request charges. */
class CosmosCrudIT extends LocalCosmosTestBase {
    private CosmosAsyncContainer items;
    private final CosmosItemRequestOptions withContent = new CosmosItemRequestOptions().setContentResponseOnWriteEnabled(true);

    @BeforeAll
    void createContainer() {
        items = container("items", 3600);
    }

    @Test
    void databaseAndContainerAreCreatedOnlyIfMissing() {
        CosmosDatabaseResponse again = client.createDatabaseIfNotExists(databaseId).block();
        assertThat(again.getStatusCode()).isEqualTo(200);

        CosmosContainerProperties props = new CosmosContainerProperties("created-once", "/pk");
        props.setDefaultTimeToLiveInSeconds(86_400);
        CosmosContainerResponse first = database.createContainerIfNotExists(props).block();
        CosmosContainerResponse second = database.createContainerIfNotExists(props).block();
        assertThat(first.getStatusCode()).isEqualTo(201);
        assertThat(second.getStatusCode()).isEqualTo(200);

        CosmosContainerProperties read = database.getContainer("created-once").read().block().getProperties();
        assertThat(read.getPartitionKeyDefinition().getPaths()).containsExactly("/pk");
        assertThat(read.getDefaultTimeToLiveInSeconds()).isEqualTo(86_400);
    }

    /**
     * Two instances starting together both read "no such database" and both create it; the slower create
     * answers 409, which must not stop that instance. The read is delayed so that both reads happen before
     * either create, every time.
     */
    @Test
    void instancesCreatingTheSameContainerAtOnceBothStart() throws Exception {
        String db = databaseId + "-race";
        inject(Fault.delay(500).method("GET").path("^/dbs/" + db + "$"));
        CosmosSettings settings = CosmosSettings.from(Config.load(CosmosSettings.ALL, List.of(), new String[] {
                "--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + db, "--cosmos.container=buckets"}, Map.of()));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<CosmosAsyncContainer> first = pool.submit(() -> CosmosClients.container(client, settings));
            Future<CosmosAsyncContainer> second = pool.submit(() -> CosmosClients.container(client, settings));
            assertThat(first.get().getId()).isEqualTo("buckets");
            assertThat(second.get().getId()).isEqualTo("buckets");
            assertThat(client.getDatabase(db).getContainer("buckets").read().block().getStatusCode()).isEqualTo(200);
        } finally {
            pool.shutdownNow();
            client.getDatabase(db).delete().onErrorResume(e -> Mono.empty()).block();
        }
    }

    /**
     * The bucket container indexes only what read-service queries, and the endpoint charges writes by the index
     * terms they touch: the same bucket costs less to write there than in a container indexing every path.
     */
    @Test
    void theBucketContainerIndexesOnlyWhatReadServiceQueriesSoWritesCostLess() {
        String db = databaseId + "-indexing";
        try {
            CosmosSettings narrow = CosmosSettings.from(Config.load(CosmosSettings.ALL, List.of(), new String[] {
                    "--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + db, "--cosmos.container=narrow"}, Map.of()));
            CosmosSettings everything = CosmosSettings.from(Config.load(CosmosSettings.ALL, List.of(), new String[] {
                    "--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + db, "--cosmos.container=everything",
                    "--cosmos.index-all-paths=true"}, Map.of()));
            CosmosAsyncContainer tally = CosmosClients.container(client, narrow);
            CosmosAsyncContainer all = CosmosClients.container(client, everything);

            var policy = tally.read().block().getProperties().getIndexingPolicy();
            assertThat(policy.getIncludedPaths()).extracting(p -> p.getPath()).containsExactlyInAnyOrder("/unit/?", "/bucket/?", "/page/?");
            assertThat(policy.getExcludedPaths()).extracting(p -> p.getPath()).contains("/*");

            EntityBucket entity = EntityBucket.main("shop|c-1", TimeUnit.HOUR, 1, "2026-01-01T00:00:00Z");
            entity.addGrade("spend", new Aggregate(new BigDecimal("10.5"), 2, new BigDecimal("1.5"), BigDecimal.valueOf(9)), 3_024_000);
            entity.addQualified("spend-sku", "sku-1", new Aggregate(new BigDecimal("10.5"), 2, null, null), 3_024_000);
            entity.stamp("2026-01-01T00:10:00Z");
            ObjectNode bucket = EntityBucketJson.tree(entity);
            double narrowCreate = tally.createItem(bucket, new PartitionKey("shop|c-1"), null).block().getRequestCharge();
            double allCreate = all.createItem(bucket, new PartitionKey("shop|c-1"), null).block().getRequestCharge();
            double narrowUpsert = tally.upsertItem(bucket.put("ver", 3), new PartitionKey("shop|c-1"), null).block().getRequestCharge();
            double allUpsert = all.upsertItem(bucket, new PartitionKey("shop|c-1"), null).block().getRequestCharge();
            assertThat(narrowCreate).isLessThan(allCreate - 0.5);
            assertThat(narrowUpsert).isLessThan(allUpsert - 1.0);

            // Still queryable the way read-service queries, inside one partition.
            assertThat(tally.queryItems("SELECT * FROM c WHERE c.unit = 'hour' AND c.bucket >= '2026' "
                    + "ORDER BY c.bucket ASC", new com.azure.cosmos.models.CosmosQueryRequestOptions()
                    .setPartitionKey(new PartitionKey("shop|c-1")), ObjectNode.class).collectList().block()).hasSize(1);
        } finally {
            client.getDatabase(db).delete().onErrorResume(e -> Mono.empty()).block();
        }
    }

    @Test
    void createReadUpsertReplaceDelete() {
        ObjectNode a = doc("p1", "grade|day|1").put("sum", 10);
        CosmosItemResponse<ObjectNode> created = items.createItem(a, new PartitionKey("p1"), withContent).block();
        assertThat(created.getStatusCode()).isEqualTo(201);
        assertThat(created.getItem().get("_etag").asText()).isNotBlank();
        assertThat(created.getRequestCharge()).isBetween(4.0, 11.0); // the 1 KB floor, 4.95, less 0.1 per index term under 10

        CosmosItemResponse<ObjectNode> read = items.readItem("grade|day|1", new PartitionKey("p1"), ObjectNode.class).block();
        assertThat(read.getStatusCode()).isEqualTo(200);
        assertThat(read.getItem().get("sum").asInt()).isEqualTo(10);
        assertThat(read.getRequestCharge()).isEqualTo(1.0);
        assertThat(read.getETag()).isEqualTo(created.getETag());

        CosmosItemResponse<ObjectNode> upserted = items.upsertItem(a.put("sum", 11), new PartitionKey("p1"), withContent).block();
        assertThat(upserted.getStatusCode()).isEqualTo(200);
        assertThat(upserted.getETag()).isNotEqualTo(created.getETag());
        assertThat(upserted.getRequestCharge()).isGreaterThan(created.getRequestCharge());

        CosmosItemResponse<ObjectNode> upsertNew = items.upsertItem(doc("p1", "grade|day|2"), new PartitionKey("p1"), withContent).block();
        assertThat(upsertNew.getStatusCode()).isEqualTo(201);

        CosmosItemResponse<ObjectNode> replaced =
                items.replaceItem(a.put("sum", 12), "grade|day|1", new PartitionKey("p1"), withContent).block();
        assertThat(replaced.getStatusCode()).isEqualTo(200);
        assertThat(replaced.getItem().get("sum").asInt()).isEqualTo(12);

        CosmosItemResponse<Object> deleted = items.deleteItem("grade|day|1", new PartitionKey("p1")).block();
        assertThat(deleted.getStatusCode()).isEqualTo(204);
        assertThat(deleted.getRequestCharge()).isBetween(4.0, 11.0); // charged as its create
        assertNotFound(() -> items.readItem("grade|day|1", new PartitionKey("p1"), ObjectNode.class).block());
    }

    @Test
    void readingAMissingIdIs404WithACharge() {
        CosmosException e = assertNotFound(() -> items.readItem("nope", new PartitionKey("p1"), ObjectNode.class).block());
        assertThat(e.getRequestCharge()).isGreaterThan(0);
        // Same id, other partition: still not found.
        items.createItem(doc("p2", "only-in-p2")).block();
        assertNotFound(() -> items.readItem("only-in-p2", new PartitionKey("p1"), ObjectNode.class).block());
    }

    @Test
    void creatingAnExistingIdIsAConflict() {
        items.createItem(doc("p3", "dup")).block();
        assertThatThrownBy(() -> items.createItem(doc("p3", "dup")).block())
                .isInstanceOfSatisfying(CosmosException.class, e -> assertThat(e.getStatusCode()).isEqualTo(409));
        // The same id in another partition is a different item.
        assertThat(items.createItem(doc("p4", "dup")).block().getStatusCode()).isEqualTo(201);
    }

    @Test
    void ifMatchRejectsAStaleEtag() {
        ObjectNode d = doc("p5", "versioned").put("ver", 1);
        String etag1 = items.createItem(d).block().getETag();
        String etag2 = items.replaceItem(d.put("ver", 2), "versioned", new PartitionKey("p5"),
                new CosmosItemRequestOptions().setIfMatchETag(etag1)).block().getETag();
        assertThat(etag2).isNotEqualTo(etag1);

        assertPreconditionFailed(() -> items.replaceItem(d.put("ver", 3), "versioned", new PartitionKey("p5"),
                new CosmosItemRequestOptions().setIfMatchETag(etag1)).block());
        assertPreconditionFailed(() -> items.upsertItem(d.put("ver", 3), new PartitionKey("p5"),
                new CosmosItemRequestOptions().setIfMatchETag(etag1)).block());
        assertPreconditionFailed(() -> items.deleteItem("versioned", new PartitionKey("p5"),
                new CosmosItemRequestOptions().setIfMatchETag(etag1)).block());

        assertThat(items.readItem("versioned", new PartitionKey("p5"), ObjectNode.class).block().getItem().get("ver").asInt())
                .as("stale writes changed nothing").isEqualTo(2);
        assertThat(items.deleteItem("versioned", new PartitionKey("p5"),
                new CosmosItemRequestOptions().setIfMatchETag(etag2)).block().getStatusCode()).isEqualTo(204);
    }

    @Test
    void patchSetsIncrementsAddsAndRemoves() {
        ObjectNode d = doc("p6", "patched").put("count", 5).put("old", true);
        d.putArray("tags").add("a");
        items.createItem(d).block();

        CosmosItemResponse<ObjectNode> patched = items.patchItem("patched", new PartitionKey("p6"),
                CosmosPatchOperations.create()
                        .set("/max", 99)
                        .increment("/count", 3)
                        .increment("/sum", 2.5)
                        .add("/tags/-", "b")
                        .remove("/old"),
                ObjectNode.class).block();
        assertThat(patched.getStatusCode()).isEqualTo(200);
        assertThat(patched.getRequestCharge()).isBetween(5.0, 11.0);
        ObjectNode after = items.readItem("patched", new PartitionKey("p6"), ObjectNode.class).block().getItem();
        assertThat(after.get("max").asInt()).isEqualTo(99);
        assertThat(after.get("count").asInt()).isEqualTo(8);
        assertThat(after.get("sum").asDouble()).isEqualTo(2.5);
        assertThat(after.get("tags").toString()).isEqualTo("[\"a\",\"b\"]");
        assertThat(after.has("old")).isFalse();

        assertThatThrownBy(() -> items.patchItem("patched", new PartitionKey("p6"),
                CosmosPatchOperations.create().remove("/missing"), ObjectNode.class).block())
                .isInstanceOfSatisfying(CosmosException.class, e -> assertThat(e.getStatusCode()).isEqualTo(400));
        assertNotFound(() -> items.patchItem("no-such", new PartitionKey("p6"),
                CosmosPatchOperations.create().set("/a", 1), ObjectNode.class).block());
    }

    @Test
    void conditionalPatchAppliesOnlyWhenThePredicateHolds() {
        items.createItem(doc("p7", "bucket").put("ver", 7).put("Sum", 70)).block();
        CosmosPatchOperations bump = CosmosPatchOperations.create().set("/ver", 8).set("/Sum", 80);

        assertPreconditionFailed(() -> items.patchItem("bucket", new PartitionKey("p7"), bump,
                new CosmosPatchItemRequestOptions().setFilterPredicate("from c where c.ver < 7"), ObjectNode.class).block());
        // The predicate keeps its case (property names are case-sensitive).
        CosmosItemResponse<ObjectNode> ok = items.patchItem("bucket", new PartitionKey("p7"), bump,
                new CosmosPatchItemRequestOptions().setFilterPredicate("FROM c WHERE c.ver < 8 AND c.Sum = 70"), ObjectNode.class).block();
        assertThat(ok.getStatusCode()).isEqualTo(200);
        assertThat(items.readItem("bucket", new PartitionKey("p7"), ObjectNode.class).block().getItem().get("Sum").asInt())
                .isEqualTo(80);
    }

    @Test
    void requestChargesFollowDocumentSize() {
        ObjectNode small = doc("p8", "small").put("v", 1);
        ObjectNode big = doc("p8", "big").put("blob", "x".repeat(50 * 1024));
        double smallWrite = items.createItem(small).block().getRequestCharge();
        double bigWrite = items.createItem(big).block().getRequestCharge();
        double smallRead = items.readItem("small", new PartitionKey("p8"), ObjectNode.class).block().getRequestCharge();
        double bigRead = items.readItem("big", new PartitionKey("p8"), ObjectNode.class).block().getRequestCharge();

        assertThat(smallWrite).isBetween(4.0, 7.0); // one indexed property: the 1 KB floor, 4.95, less 9 terms x 0.1
        assertThat(bigWrite).isGreaterThan(smallWrite + 10); // 50 KB: between the published 32 KB (11.23) and 64 KB (22.67)
        assertThat(smallRead).isEqualTo(1.0);
        assertThat(bigRead).isBetween(5.0, 7.0);
    }

    @Test
    void aDocumentWhosePartitionKeyDiffersFromTheRequestIsRejected() {
        assertThatThrownBy(() -> items.createItem(doc("p9", "mismatch"), new PartitionKey("other"), new CosmosItemRequestOptions()).block())
                .isInstanceOfSatisfying(CosmosException.class, e -> assertThat(e.getStatusCode()).isEqualTo(400));
    }

    private static CosmosException assertNotFound(Runnable call) {
        try {
            call.run();
        } catch (CosmosException e) {
            assertThat(e.getStatusCode()).isEqualTo(404);
            return e;
        }
        throw new AssertionError("expected 404 Not Found");
    }

    private static void assertPreconditionFailed(Runnable call) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(CosmosException.class, e -> assertThat(e.getStatusCode()).isEqualTo(412));
    }
}
