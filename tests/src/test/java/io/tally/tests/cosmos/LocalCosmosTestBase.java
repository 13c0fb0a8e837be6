package io.tally.tests.cosmos;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosAsyncDatabase;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.CosmosControl.Fault;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * One database per test class on the local Cosmos endpoint, reached through the real Java SDK in
 * Gateway mode. Fault rules a test adds through {@link #inject} are removed after it; the endpoint may
 * be shared (a running local stack), so tests only touch their own database's rules and budgets.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LocalCosmosTestBase {
    static final ObjectMapper JSON = new ObjectMapper();

    static {
    }

    protected LocalCosmos cosmos;
    protected CosmosControl control;
    protected CosmosAsyncClient client;
    protected CosmosAsyncDatabase database;
    protected String databaseId;
    private final List<String> injected = new ArrayList<>();

    @BeforeAll
    void openDatabase() {
        cosmos = LocalCosmos.get();
        control = cosmos.control();
        client = cosmos.newAsyncClient();
        databaseId = getClass().getSimpleName().toLowerCase(Locale.ROOT) + "-" + UUID.randomUUID().toString().substring(0, 8);
        client.createDatabaseIfNotExists(databaseId).block();
        database = client.getDatabase(databaseId);
    }

    @AfterEach
    void removeInjectedFaults() {
        removeInjectedFaultsNow();
    }

    /** Adds a fault rule that is removed after the test. */
    protected String inject(Fault fault) {
        String id = control.injectFault(fault);
        injected.add(id);
        return id;
    }

    protected void removeInjectedFaultsNow() {
        injected.forEach(control::removeFault);
        injected.clear();
    }

    @AfterAll
    void dropDatabase() {
        if (database != null) database.delete().block();
        if (client != null) client.close();
    }

    /** A container partitioned by /pk; defaultTtl null = TTL off. */
    protected CosmosAsyncContainer container(String id, Integer defaultTtl) {
        CosmosContainerProperties props = new CosmosContainerProperties(id, "/pk");
        if (defaultTtl != null) props.setDefaultTimeToLiveInSeconds(defaultTtl);
        database.createContainerIfNotExists(props).block();
        return database.getContainer(id);
    }

    protected static ObjectNode doc(String pk, String id) {
        return JSON.createObjectNode().put("id", id).put("pk", pk);
    }
}
