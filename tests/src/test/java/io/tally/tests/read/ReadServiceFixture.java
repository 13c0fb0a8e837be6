package io.tally.tests.read;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.model.BucketDocument;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucketJson;
import io.tally.model.TimeUnit;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A read-service on a private database of the local Cosmos endpoint, with documents written straight
 * into the container (no ingest-app): the tests know exactly what is stored. Tests speak in grade buckets, as the
 * read API answers; the container holds them as entity buckets.
 */
final class ReadServiceFixture implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    final LocalCosmos cosmos;
    final String database = "read-it-" + UUID.randomUUID().toString().substring(0, 8);
    final ReadMain read;
    final CosmosAsyncClient client;
    final CosmosAsyncContainer container;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ReadServiceFixture(LocalCosmos cosmos, Map<String, String> env, String... flags) {
        this.cosmos = cosmos;
        // The rules record is read at start and not again unless a test says so: a refresh in the middle of a test would
        // take a fault the test injected for its own request.
        String[] base = {"--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + database, "--read.http.port=0",
                "--read.cosmos.warmup-requests=2", "--read.rules-refresh.ms=3600000"};
        String[] all = Arrays.copyOf(base, base.length + flags.length);
        System.arraycopy(flags, 0, all, base.length, flags.length);
        this.read = new ReadMain(ReadSettings.load(all, env)).start(); // creates database and container
        this.client = cosmos.newAsyncClient();
        this.container = client.getDatabase(database).getContainer("buckets");
    }

    /** The fault-rule path prefix that only hits this fixture's container. */
    String pathPrefix() {
        return "/dbs/" + database + "/colls/buckets";
    }

    /** 35 days, the default rules' longest retention: a seeded document outlives any test. */
    static final int TTL_SECONDS = 3_024_000;

    /** One grade bucket as the read API answers it (ver = its count); {@link #write} stores it in its entity bucket. */
    static BucketDocument bucket(String domain, String entity, String grade, TimeUnit unit, long index,
                                 String sum, long count, String min, String max) {
        BucketKey key = new BucketKey(domain, entity, grade, unit, index);
        return new BucketDocument(key.pk(), key.id(), grade, unit.code(), unit.bucketStart(index).toString(),
                new BigDecimal(sum), count, min == null ? null : new BigDecimal(min), max == null ? null : new BigDecimal(max),
                count, TTL_SECONDS, Instant.now().toString());
    }

    /** Stores {@code grades} as the entity bucket documents the pipeline would have written for them. */
    void write(List<BucketDocument> grades) {
        List<CosmosItemOperation> ops = new ArrayList<>();
        EntityBuckets.of(grades).forEach(d -> ops.add(CosmosBulkOperations.getUpsertItemOperation(EntityBucketJson.tree(d),
                new PartitionKey(d.pk()))));
        container.executeBulkOperations(reactor.core.publisher.Flux.fromIterable(ops))
                .doOnNext(r -> {
                    if (r.getException() != null) throw new IllegalStateException("write failed", r.getException());
                    if (r.getResponse() == null || !r.getResponse().isSuccessStatusCode()) {
                        throw new IllegalStateException("write failed: " + (r.getResponse() == null ? "no response" : r.getResponse().getStatusCode()));
                    }
                })
                .blockLast(Duration.ofSeconds(60));
    }

    record Answer(int status, Map<String, List<String>> headers, String body) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        String header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> e.getValue().get(0)).findFirst().orElse(null);
        }
    }

    Answer get(String pathAndQuery, String... headers) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + read.port() + pathAndQuery))
                    .timeout(Duration.ofSeconds(20));
            if (headers.length > 0) b.headers(headers);
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(r.statusCode(), r.headers().map(), r.body());
        } catch (Exception e) {
            throw new AssertionError("GET " + pathAndQuery + " failed", e);
        }
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        try {
            client.getDatabase(database).delete().block(Duration.ofSeconds(10));
        } catch (RuntimeException ignored) {
            // the endpoint is in memory and per test JVM; a leftover database costs nothing
        }
        client.close();
        read.close();
    }
}
