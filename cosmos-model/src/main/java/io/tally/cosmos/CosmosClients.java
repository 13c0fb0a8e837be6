package io.tally.cosmos;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.ConsistencyLevel;
import com.azure.cosmos.DirectConnectionConfig;
import com.azure.cosmos.GatewayConnectionConfig;
import com.azure.cosmos.models.CosmosContainerProperties;
import com.azure.cosmos.models.ThroughputProperties;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds Cosmos clients and makes sure the bucket container exists. */
public final class CosmosClients {
    private static final Logger log = LoggerFactory.getLogger(CosmosClients.class);
    public static final String PARTITION_KEY_PATH = "/pk";

    private CosmosClients() {}

    public static CosmosAsyncClient build(CosmosSettings s) {
        CosmosClientBuilder b = new CosmosClientBuilder()
                .endpoint(s.endpoint())
                .key(s.key())
                .consistencyLevel(ConsistencyLevel.SESSION)
                .contentResponseOnWriteEnabled(false)
                .endpointDiscoveryEnabled(s.endpointDiscovery());
        if (s.mode() == CosmosSettings.ConnectionMode.DIRECT) {
            b.directMode(DirectConnectionConfig.getDefaultConfig());
        } else {
            b.gatewayMode(GatewayConnectionConfig.getDefaultConfig());
        }
        return b.buildAsyncClient();
    }

    /**
     * The bucket container, created with partition key /pk and TTL enabled (-1: documents carry
     * their own ttl) when {@code createIfMissing} is set.
     */
    public static CosmosAsyncContainer container(CosmosAsyncClient client, CosmosSettings s) {
        if (s.createIfMissing()) {
            client.createDatabaseIfNotExists(s.database()).block(Duration.ofSeconds(30));
            CosmosContainerProperties props = new CosmosContainerProperties(s.container(), PARTITION_KEY_PATH);
            props.setDefaultTimeToLiveInSeconds(-1);
            client.getDatabase(s.database())
                    .createContainerIfNotExists(props, ThroughputProperties.createManualThroughput(400))
                    .block(Duration.ofSeconds(30));
            log.info("Cosmos container {}/{} ready at {}", s.database(), s.container(), s.endpoint());
        }
        return client.getDatabase(s.database()).getContainer(s.container());
    }
}
