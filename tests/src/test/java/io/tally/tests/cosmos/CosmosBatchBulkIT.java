package io.tally.tests.cosmos;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosBatch;
import com.azure.cosmos.models.CosmosBatchOperationResult;
import com.azure.cosmos.models.CosmosBatchResponse;
import com.azure.cosmos.models.CosmosBulkOperationResponse;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** executeBulkOperations (independent operations) and executeCosmosBatch (all or nothing). */
class CosmosBatchBulkIT extends LocalCosmosTestBase {
    private CosmosAsyncContainer items;

    @BeforeAll
    void createContainer() {
        items = container("items", -1);
    }

    @Test
    void bulkMixesOperationsOverManyPartitionKeysWithAStatusPerItem() {
        int entities = 40;
        // Existing items the operations below act on.
        Flux.range(0, entities).flatMap(i -> items.createItem(doc("ent" + i, "existing").put("v", i))).blockLast();

        List<CosmosItemOperation> ops = new ArrayList<>();
        Map<String, Integer> expected = new HashMap<>();
        for (int i = 0; i < entities; i++) {
            PartitionKey pk = new PartitionKey("ent" + i);
            String e = "ent" + i;
            switch (i % 5) {
                case 0 -> {
                    ops.add(CosmosBulkOperations.getCreateItemOperation(doc(e, "new"), pk, e + "/create-new"));
                    expected.put(e + "/create-new", 201);
                    ops.add(CosmosBulkOperations.getCreateItemOperation(doc(e, "existing"), pk, e + "/create-existing"));
                    expected.put(e + "/create-existing", 409);
                }
                case 1 -> {
                    ops.add(CosmosBulkOperations.getUpsertItemOperation(doc(e, "existing").put("v", 1000), pk, e + "/upsert-existing"));
                    expected.put(e + "/upsert-existing", 200);
                    ops.add(CosmosBulkOperations.getUpsertItemOperation(doc(e, "new"), pk, e + "/upsert-new"));
                    expected.put(e + "/upsert-new", 201);
                }
                case 2 -> {
                    ops.add(CosmosBulkOperations.getReplaceItemOperation("existing", doc(e, "existing").put("v", -1), pk, e + "/replace"));
                    expected.put(e + "/replace", 200);
                    ops.add(CosmosBulkOperations.getReplaceItemOperation("absent", doc(e, "absent"), pk, e + "/replace-missing"));
                    expected.put(e + "/replace-missing", 404);
                }
                case 3 -> {
                    ops.add(CosmosBulkOperations.getPatchItemOperation("existing", pk,
                            CosmosPatchOperations.create().increment("/v", 100).set("/patched", true), e + "/patch"));
                    expected.put(e + "/patch", 200);
                    ops.add(CosmosBulkOperations.getPatchItemOperation("absent", pk,
                            CosmosPatchOperations.create().set("/x", 1), e + "/patch-missing"));
                    expected.put(e + "/patch-missing", 404);
                }
                default -> {
                    ops.add(CosmosBulkOperations.getDeleteItemOperation("existing", pk, e + "/delete"));
                    expected.put(e + "/delete", 204);
                    ops.add(CosmosBulkOperations.getDeleteItemOperation("absent", pk, e + "/delete-missing"));
                    expected.put(e + "/delete-missing", 404);
                }
            }
        }

        Map<String, Integer> actual = new HashMap<>();
        for (CosmosBulkOperationResponse<Object> r : items.executeBulkOperations(Flux.fromIterable(ops)).collectList().block()) {
            String context = r.getOperation().getContext();
            assertThat(r.getException()).as(context).isNull();
            actual.put(context, r.getResponse().getStatusCode());
        }
        assertThat(actual).isEqualTo(expected);

        // The effects are visible to point reads.
        assertThat(read("ent1", "existing").get("v").asInt()).isEqualTo(1000);
        assertThat(read("ent2", "existing").get("v").asInt()).isEqualTo(-1);
        ObjectNode patched = read("ent3", "existing");
        assertThat(patched.get("v").asInt()).isEqualTo(103);
        assertThat(patched.get("patched").asBoolean()).isTrue();
        assertThat(exists("ent4", "existing")).isFalse();
        assertThat(exists("ent0", "new")).isTrue();
        assertThat(exists("ent2", "absent")).isFalse();
    }

    @Test
    void transactionalBatchCommitsEveryOperation() {
        PartitionKey pk = new PartitionKey("tx-ok");
        items.createItem(doc("tx-ok", "a").put("v", 1)).block();
        items.createItem(doc("tx-ok", "gone")).block();
        CosmosBatch batch = CosmosBatch.createCosmosBatch(pk);
        batch.createItemOperation(doc("tx-ok", "b").put("v", 2));
        batch.upsertItemOperation(doc("tx-ok", "c").put("v", 3));
        batch.replaceItemOperation("a", doc("tx-ok", "a").put("v", 10));
        batch.patchItemOperation("b", CosmosPatchOperations.create().increment("/v", 5));
        batch.deleteItemOperation("gone");
        batch.readItemOperation("a");

        CosmosBatchResponse response = items.executeCosmosBatch(batch).block();
        assertThat(response.isSuccessStatusCode()).isTrue();
        assertThat(response.getStatusCode()).isEqualTo(200);
        assertThat(response.getResults()).extracting(CosmosBatchOperationResult::getStatusCode)
                .containsExactly(201, 201, 200, 200, 204, 200);
        assertThat(response.getResults().get(5).getItem(ObjectNode.class).get("v").asInt()).isEqualTo(10);
        // Two creates and a delete at ~4 RU, an upsert, a replace and a patch at ~8 RU each, a read at 1 (small documents, the
        // local endpoint's size-calibrated charges): ~29 RU for the batch, the sum of its operations.
        assertThat(response.getRequestCharge()).isGreaterThan(25.0);
        assertThat(read("tx-ok", "b").get("v").asInt()).isEqualTo(7);
        assertThat(exists("tx-ok", "gone")).isFalse();
    }

    @Test
    void aFailingOperationRollsBackTheWholeTransactionalBatch() {
        PartitionKey pk = new PartitionKey("tx-fail");
        items.createItem(doc("tx-fail", "x").put("v", 1)).block();
        items.createItem(doc("tx-fail", "y").put("v", 1)).block();
        CosmosBatch batch = CosmosBatch.createCosmosBatch(pk);
        batch.createItemOperation(doc("tx-fail", "fresh"));
        batch.patchItemOperation("x", CosmosPatchOperations.create().set("/v", 2));
        batch.deleteItemOperation("y");
        batch.createItemOperation(doc("tx-fail", "x")); // conflict
        batch.upsertItemOperation(doc("tx-fail", "later"));

        CosmosBatchResponse response = items.executeCosmosBatch(batch).block();
        assertThat(response.isSuccessStatusCode()).isFalse();
        // The SDK promotes the failing operation's status over the 207 the service answers.
        assertThat(response.getStatusCode()).isEqualTo(409);
        assertThat(response.getResults()).extracting(CosmosBatchOperationResult::getStatusCode)
                .containsExactly(424, 424, 424, 409, 424);

        assertThat(exists("tx-fail", "fresh")).isFalse();
        assertThat(read("tx-fail", "x").get("v").asInt()).isEqualTo(1);
        assertThat(exists("tx-fail", "y")).as("the delete was undone").isTrue();
        assertThat(exists("tx-fail", "later")).isFalse();
    }

    @Test
    void aStaleEtagFailsTheTransactionalBatchWith412() {
        PartitionKey pk = new PartitionKey("tx-etag");
        String etag = items.createItem(doc("tx-etag", "k").put("v", 1)).block().getETag();
        items.upsertItem(doc("tx-etag", "k").put("v", 2)).block();
        CosmosBatch batch = CosmosBatch.createCosmosBatch(pk);
        batch.upsertItemOperation(doc("tx-etag", "other"));
        batch.replaceItemOperation("k", doc("tx-etag", "k").put("v", 3),
                new com.azure.cosmos.models.CosmosBatchItemRequestOptions().setIfMatchETag(etag));
        CosmosBatchResponse response = items.executeCosmosBatch(batch).block();
        assertThat(response.getResults()).extracting(CosmosBatchOperationResult::getStatusCode).containsExactly(424, 412);
        assertThat(read("tx-etag", "k").get("v").asInt()).isEqualTo(2);
        assertThat(exists("tx-etag", "other")).isFalse();
    }

    private ObjectNode read(String pk, String id) {
        return items.readItem(id, new PartitionKey(pk), ObjectNode.class).block().getItem();
    }

    private boolean exists(String pk, String id) {
        try {
            read(pk, id);
            return true;
        } catch (CosmosException e) {
            if (e.getStatusCode() == 404) return false;
            throw e;
        }
    }
}
