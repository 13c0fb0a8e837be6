package io.tally.cosmos;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.cosmos.models.ModelBridgeInternal;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * deploy/azure/container.json, which the Azure CLI and Bicep provisioning of docs/azure.md read, is the container
 * Tally itself creates ({@link CosmosClients#containerProperties}), so the two cannot drift when the indexing policy
 * changes. Regenerate it with
 * {@code ./mvnw -q -pl cosmos-model -am test -Dtest=ContainerDefinitionTest -Dsurefire.failIfNoSpecifiedTests=false -Dtally.docs.regenerate=true}.
 */
class ContainerDefinitionTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Path FILE = Path.of("..", "deploy", "azure", "container.json");

    /** The definition without its name (the deployment chooses it), as the SDK would send it. */
    static JsonNode definition() throws Exception {
        var props = CosmosClients.containerProperties("buckets", false);
        ObjectNode json = (ObjectNode) JSON.readTree(ModelBridgeInternal.getV2Collection(props).toJson());
        json.remove("id");
        if (json.path("uniqueKeyPolicy").isEmpty()) json.remove("uniqueKeyPolicy"); // none: nothing to provision
        return json;
    }

    @Test
    void deployAzureContainerJsonIsTheContainerTallyCreates() throws Exception {
        JsonNode expected = definition();
        if (Boolean.getBoolean("tally.docs.regenerate")) {
            Files.writeString(FILE, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(expected) + "\n");
        }
        assertThat(JSON.readTree(FILE.toFile())).as("%s (regenerate: see this test's javadoc)", FILE).isEqualTo(expected);
        assertThat(expected.path("partitionKey").path("paths").get(0).asText()).isEqualTo("/pk");
        assertThat(expected.path("defaultTtl").asInt()).isEqualTo(-1);
    }
}
