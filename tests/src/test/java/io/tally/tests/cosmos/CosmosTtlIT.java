package io.tally.tests.cosmos;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

/**
 * Item expiry with the service's rules: container defaultTtl, per-item ttl, -1 = never, no
 * defaultTtl = TTL off. Expired items vanish from point reads and queries.
 */
class CosmosTtlIT extends LocalCosmosTestBase {

    @Test
    void expiredItemsVanishFromReadsAndQueries() throws InterruptedException {
        CosmosAsyncContainer shortLived = container("default-1s", 1);
        CosmosAsyncContainer optIn = container("default-never", -1);
        CosmosAsyncContainer ttlOff = container("ttl-off", null);

        shortLived.createItem(doc("e", "inherits-1s")).block();
        shortLived.createItem(doc("e", "never").put("ttl", -1)).block();
        shortLived.createItem(doc("e", "own-60s").put("ttl", 60)).block();
        optIn.createItem(doc("e", "own-1s").put("ttl", 1)).block();
        optIn.createItem(doc("e", "inherits-never")).block();
        ttlOff.createItem(doc("e", "ignored-1s").put("ttl", 1)).block();

        assertThat(exists(shortLived, "inherits-1s")).isTrue();
        assertThat(exists(optIn, "own-1s")).isTrue();
        assertThat(count(shortLived)).isEqualTo(3);

        Thread.sleep(1_600);

        assertThat(exists(shortLived, "inherits-1s")).isFalse();
        assertThat(exists(shortLived, "never")).isTrue();
        assertThat(exists(shortLived, "own-60s")).isTrue();
        assertThat(exists(optIn, "own-1s")).isFalse();
        assertThat(exists(optIn, "inherits-never")).isTrue();
        assertThat(exists(ttlOff, "ignored-1s")).isTrue();
        assertThat(count(shortLived)).isEqualTo(2);
        assertThat(count(optIn)).isEqualTo(1);
        assertThat(shortLived.queryItems("SELECT VALUE c.id FROM c", new CosmosQueryRequestOptions(), String.class)
                .collectList().block()).containsExactlyInAnyOrder("never", "own-60s");

        // An expired id is free again.
        assertThat(shortLived.createItem(doc("e", "inherits-1s")).block().getStatusCode()).isEqualTo(201);
    }

    @Test
    void aWriteRestartsTheClock() throws InterruptedException {
        CosmosAsyncContainer c = container("restart", 2);
        c.createItem(doc("e", "touched")).block();
        Thread.sleep(1_200);
        c.upsertItem(doc("e", "touched").put("v", 2)).block();
        Thread.sleep(1_200);
        assertThat(exists(c, "touched")).as("2.4 s after creation, 1.2 s after the upsert").isTrue();
    }

    @Test
    void anInvalidItemTtlIsRejected() {
        CosmosAsyncContainer c = container("invalid", -1);
        try {
            c.createItem(doc("e", "zero").put("ttl", 0)).block();
            throw new AssertionError("ttl 0 must be rejected");
        } catch (CosmosException e) {
            assertThat(e.getStatusCode()).isEqualTo(400);
        }
    }

    private static boolean exists(CosmosAsyncContainer c, String id) {
        try {
            c.readItem(id, new PartitionKey("e"), ObjectNode.class).block();
            return true;
        } catch (CosmosException e) {
            if (e.getStatusCode() == 404) return false;
            throw e;
        }
    }

    private static long count(CosmosAsyncContainer c) {
        return c.queryItems("SELECT VALUE COUNT(1) FROM c",
                new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey("e")), Long.class).blockFirst();
    }
}
