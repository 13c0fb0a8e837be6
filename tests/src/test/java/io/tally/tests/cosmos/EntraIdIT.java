package io.tally.tests.cosmos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.core.credential.AccessToken;
import com.azure.core.credential.TokenCredential;
import com.azure.core.credential.TokenRequestContext;
import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.SqlParameter;
import com.azure.cosmos.models.SqlQuerySpec;
import com.azure.identity.ClientSecretCredentialBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.cosmos.CosmosClients;
import io.tally.cosmos.CosmosSettings;
import io.tally.model.BucketDocument;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketJson;
import io.tally.model.TimeUnit;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.EntityBuckets;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Entra ID end to end against the local stack: azure-identity's own {@code ClientSecretCredential} gets a token from
 * the local Cosmos endpoint's token issuer (authority host = the endpoint's HTTPS port, instance discovery off, which
 * MSAL needs for an authority it does not know), and Tally's Cosmos client ({@link CosmosClients}, the one ingest-app,
 * read-service and replay build) writes bucket documents with it; read-service, configured the same way, reads them
 * back. Tokens the endpoint must refuse (expired, for another audience, badly signed, from another issuer) get 401 with
 * the service's message, and a token may not create a container (403/5300) — the reason Tally refuses
 * {@code cosmos.create-if-missing} with Entra ID.
 *
 * <p>The database and container are provisioned with the account key first, as docs/azure.md does with the Azure CLI.
 * A private endpoint, so that the token check is this tree's, whatever endpoint the machine's stack runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EntraIdIT {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String TENANT = "tally-it-tenant";
    static final String CLIENT_ID = "tally-it-" + UUID.randomUUID().toString().substring(0, 8);
    static final String CLIENT_SECRET = UUID.randomUUID().toString();

    LocalCosmos cosmos;
    CosmosControl control;
    String authorityHost;
    final String database = "entra-it-" + UUID.randomUUID().toString().substring(0, 8);
    final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    void provision() {
        cosmos = LocalCosmos.startPrivate();
        control = cosmos.control();
        authorityHost = control.registerEntraClient(CLIENT_ID, CLIENT_SECRET);
        // Provisioning is a control-plane step: with the key, as an operator would with `az cosmosdb sql container create`.
        CosmosSettings keyed = settings("--cosmos.database=" + database);
        CosmosAsyncClient admin = CosmosClients.build(keyed);
        closeAfter.add(admin);
        CosmosClients.container(admin, keyed);
    }

    @AfterAll
    void close() throws Exception {
        for (AutoCloseable c : closeAfter) c.close();
    }

    String[] entraFlags(String... more) {
        return Stream.concat(Stream.of(
                "--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + database,
                "--cosmos.auth=service-principal-secret", "--cosmos.auth.tenant-id=" + TENANT,
                "--cosmos.auth.client-id=" + CLIENT_ID, "--cosmos.auth.client-secret=" + CLIENT_SECRET,
                "--cosmos.auth.authority-host=" + authorityHost, "--cosmos.auth.disable-instance-discovery=true",
                "--cosmos.create-if-missing=false"), Stream.of(more)).toArray(String[]::new);
    }

    CosmosSettings settings(String... flags) {
        String[] all = Stream.concat(Stream.of("--cosmos.endpoint=" + cosmos.endpoint()), Stream.of(flags)).toArray(String[]::new);
        return CosmosSettings.from(Config.load(CosmosSettings.ALL, List.of(), all, Map.of()));
    }

    static BucketDocument bucket(String entity, long hour, String sum) {
        BucketKey key = new BucketKey("entra", entity, "spend", TimeUnit.HOUR, hour);
        return new BucketDocument(key.pk(), key.id(), "spend", TimeUnit.HOUR.code(), TimeUnit.HOUR.bucketStart(hour).toString(),
                new BigDecimal(sum), 1, new BigDecimal(sum), new BigDecimal(sum), 1, 3600, Instant.now().toString());
    }

    @Test
    void azureIdentityTokenFromTheLocalIssuerWritesAndReadsBuckets() throws Exception {
        JsonNode before = control.entra();
        CosmosSettings entra = settings(entraFlags());
        assertThat(entra.auth().describe()).contains("service-principal-secret").doesNotContain(CLIENT_SECRET);

        CosmosAsyncClient client = CosmosClients.build(entra);
        closeAfter.add(client);
        CosmosAsyncContainer container = CosmosClients.container(client, entra);
        long hour = TimeUnit.HOUR.bucketIndex(Instant.now());
        List<BucketDocument> grades = List.of(bucket("c-1", hour, "12.50"), bucket("c-1", hour - 1, "7.25"), bucket("c-2", hour, "3"));
        List<CosmosItemOperation> ops = EntityBuckets.of(grades).stream()
                .map(d -> CosmosBulkOperations.getUpsertItemOperation(EntityBucketJson.tree(d), new PartitionKey(d.pk()))).toList();
        container.executeBulkOperations(Flux.fromIterable(ops))
                .doOnNext(r -> assertThat(r.getResponse()).as("bulk response %s", r.getException()).isNotNull()
                        .satisfies(x -> assertThat(x.isSuccessStatusCode()).as("status %s", x.getStatusCode()).isTrue()))
                .blockLast(Duration.ofSeconds(60));

        BucketDocument one = grades.get(0);
        assertThat(container.readItem(EntityBucketId.main(TimeUnit.HOUR, hour), new PartitionKey(one.pk()), EntityBucket.class).block()
                .getItem().grade("spend", null).orElseThrow().sum()).isEqualByComparingTo("12.50");
        List<JsonNode> partition = container.queryItems(new SqlQuerySpec("SELECT * FROM c WHERE c.unit = @u",
                        new SqlParameter("@u", "hour")), new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey(one.pk())),
                JsonNode.class).collectList().block();
        assertThat(partition).hasSize(2);

        // read-service, configured for Entra ID the same way, answers from the same container.
        ReadMain read = new ReadMain(ReadSettings.load(entraFlags("--read.http.port=0", "--read.cosmos.warmup-requests=1"), Map.of())).start();
        closeAfter.add(read::close);
        HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + read.port()
                + "/v1/buckets/" + enc(one.pk()) + "/" + enc(one.id()))).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(new BigDecimal(JSON.readTree(answer.body()).get("sum").asText())).isEqualByComparingTo("12.50");

        JsonNode issuer = control.entra();
        assertThat(issuer.get("tokensIssued").asLong()).as("tokens from the token endpoint")
                .isGreaterThan(before.get("tokensIssued").asLong());
        assertThat(issuer.get("refused").asLong()).as("tokens the endpoint refused").isEqualTo(before.get("refused").asLong());
    }

    @Test
    void aWrongClientSecretFailsInAzureIdentityWithEntrasError() {
        TokenCredential wrong = new ClientSecretCredentialBuilder().authorityHost(authorityHost).tenantId(TENANT)
                .clientId(CLIENT_ID).clientSecret("not-the-secret").disableInstanceDiscovery().build();
        assertThatThrownBy(() -> wrong.getToken(new TokenRequestContext().addScopes("https://cosmos.azure.com/.default"))
                .block(Duration.ofSeconds(30)))
                .hasMessageContaining("AADSTS7000215: Invalid client secret provided");
    }

    @Test
    void refusedTokensAre401WithTheServicesMessage() {
        record Case(String what, ObjectNode spec, String message) {}
        List<Case> cases = List.of(
                new Case("expired", CosmosControl.tokenSpec().put("lifetimeSeconds", -300), "Provided AAD token has been expired since"),
                new Case("wrong audience", CosmosControl.tokenSpec().put("audience", "https://storage.azure.com"),
                        "Provided AAD token is intended for [https://storage.azure.com]"),
                new Case("badly signed", CosmosControl.tokenSpec().put("signWithForeignKey", true), "failed signature validation"),
                new Case("another issuer", CosmosControl.tokenSpec().put("issuer", "https://login.microsoftonline.com/x/v2.0"),
                        "does not trust"));
        for (Case c : cases) {
            String token = control.mintEntraToken(c.spec().put("tenant", TENANT).put("clientId", CLIENT_ID));
            // The same SDK path as azure-identity's credential, with a token azure-identity would never hand out. The
            // client's first request (the account read) is refused, and the SDK fails the build with it as the cause.
            TokenCredential fixed = ctx -> Mono.just(new AccessToken(token, OffsetDateTime.now(ZoneOffset.UTC).plusHours(1)));
            assertThatThrownBy(() -> {
                try (CosmosAsyncClient client = cosmos.clientBuilder().credential(fixed).buildAsyncClient()) {
                    client.getDatabase(database).getContainer("buckets").readItem("x", new PartitionKey("p"), JsonNode.class).block();
                }
            }).as(c.what()).satisfies(thrown -> {
                CosmosException e = cosmosCause(thrown);
                assertThat(e.getStatusCode()).as(c.what()).isEqualTo(401);
                assertThat(e.getMessage()).as(c.what()).contains("Request blocked by Auth").contains(c.message());
            });
        }
    }

    @Test
    void aTokenMayNotCreateContainersSoTallyRefusesCreateIfMissingAtStart() {
        assertThatThrownBy(() -> settings(entraFlags("--cosmos.create-if-missing=true")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cosmos.create-if-missing=true cannot work with cosmos.auth=service-principal-secret");
        CosmosAsyncClient client = CosmosClients.build(settings(entraFlags()));
        closeAfter.add(client);
        assertThatThrownBy(() -> client.getDatabase(database).createContainerIfNotExists("another", "/pk").block())
                .isInstanceOfSatisfying(CosmosException.class, e -> {
                    assertThat(e.getStatusCode()).isEqualTo(403);
                    assertThat(e.getSubStatusCode()).isEqualTo(5300);
                    assertThat(e.getMessage()).contains("cannot be authorized by AAD token in data plane");
                });
    }

    static CosmosException cosmosCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof CosmosException e) return e;
        }
        throw new AssertionError("no CosmosException in the causes of " + t, t);
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
