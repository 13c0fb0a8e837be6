package io.tally.tests.cosmos;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.cosmos.CosmosAsyncClient;
import com.fasterxml.jackson.databind.JsonNode;
import io.tally.config.Config;
import io.tally.cosmos.CosmosClients;
import io.tally.cosmos.CosmosSettings;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * What {@code cosmos.throughput} makes Tally ask for when it creates the container, as the SDK sends it: the local
 * endpoint records the offer headers of each container create (it does not enforce them; local/cosmos/README.md).
 */
class ContainerThroughputIT {

    JsonNode offerOf(String... flags) {
        LocalCosmos cosmos = LocalCosmos.get();
        String database = "throughput-it-" + UUID.randomUUID().toString().substring(0, 8);
        String[] all = new String[flags.length + 2];
        all[0] = "--cosmos.endpoint=" + cosmos.endpoint();
        all[1] = "--cosmos.database=" + database;
        System.arraycopy(flags, 0, all, 2, flags.length);
        CosmosSettings s = CosmosSettings.from(Config.load(CosmosSettings.ALL, List.of(), all, Map.of()));
        try (CosmosAsyncClient client = CosmosClients.build(s)) {
            CosmosClients.container(client, s);
            JsonNode offer = cosmos.control().throughput().path("offers").path(database + "/" + s.container());
            client.getDatabase(database).delete().block();
            return offer;
        }
    }

    @Test
    void manualIsTheDefaultAt400() {
        assertThat(offerOf().toString()).isEqualTo("{\"mode\":\"manual\",\"ruPerSecond\":400}");
        assertThat(offerOf("--cosmos.throughput.ru-per-second=1200").path("ruPerSecond").asInt()).isEqualTo(1200);
    }

    @Test
    void autoscaleSendsTheMaximum() {
        assertThat(offerOf("--cosmos.throughput=autoscale", "--cosmos.throughput.ru-per-second=4000").toString())
                .isEqualTo("{\"mode\":\"autoscale\",\"maxRuPerSecond\":4000}");
    }

    @Test
    void noneAsksForNoThroughputOfItsOwn() {
        assertThat(offerOf("--cosmos.throughput=none").toString()).isEqualTo("{\"mode\":\"none\"}");
    }
}
