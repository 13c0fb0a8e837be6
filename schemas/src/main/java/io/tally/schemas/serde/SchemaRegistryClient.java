package io.tally.schemas.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.avro.Schema;

/**
 * A client for the Confluent Schema Registry REST API (any compatible server). Thread-safe; the
 * schema caches are bounded LRU maps because ids and schemas are immutable once registered.
 */
public final class SchemaRegistryClient {
    private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final int CACHE_SIZE = 1000;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI baseUrl;
    private final HttpClient http;
    private final Map<Integer, Schema> byId = lru();
    private final Map<String, Integer> idBySubjectAndSchema = lru();

    public SchemaRegistryClient(String url) {
        this.baseUrl = URI.create(url.endsWith("/") ? url : url + "/");
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    /** Registers the schema under the subject (idempotent on the server) and returns its global id. */
    public int register(String subject, Schema schema) {
        String cacheKey = subject + '\n' + schema;
        Integer cached = idBySubjectAndSchema.get(cacheKey);
        if (cached != null) return cached;
        JsonNode body = call("POST", "subjects/" + enc(subject) + "/versions",
                JSON.createObjectNode().put("schema", schema.toString()));
        int id = body.get("id").asInt();
        idBySubjectAndSchema.put(cacheKey, id);
        byId.putIfAbsent(id, schema);
        return id;
    }

    /** The id of a schema already registered under the subject (no registration). */
    public int lookup(String subject, Schema schema) {
        String cacheKey = subject + '\n' + schema;
        Integer cached = idBySubjectAndSchema.get(cacheKey);
        if (cached != null) return cached;
        JsonNode body = call("POST", "subjects/" + enc(subject),
                JSON.createObjectNode().put("schema", schema.toString()));
        int id = body.get("id").asInt();
        idBySubjectAndSchema.put(cacheKey, id);
        return id;
    }

    public Schema schemaById(int id) {
        Schema cached = byId.get(id);
        if (cached != null) return cached;
        JsonNode body = call("GET", "schemas/ids/" + id, null);
        Schema schema = new Schema.Parser().parse(body.get("schema").asText());
        byId.put(id, schema);
        return schema;
    }

    private JsonNode call(String method, String path, JsonNode body) {
        HttpRequest.Builder req = HttpRequest.newBuilder(baseUrl.resolve(path))
                .timeout(Duration.ofSeconds(10))
                .header("Accept", CONTENT_TYPE);
        if (body != null) {
            req.header("Content-Type", CONTENT_TYPE).method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
        } else {
            req.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> resp;
        try {
            resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new SchemaRegistryException(-1, -1, method + " " + path + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SchemaRegistryException(-1, -1, method + " " + path + " interrupted", e);
        }
        if (resp.statusCode() / 100 != 2) {
            throw SchemaRegistryException.fromResponse(method + " " + baseUrl.resolve(path), resp.statusCode(), resp.body());
        }
        try {
            return JSON.readTree(resp.body());
        } catch (IOException e) {
            throw new SchemaRegistryException(resp.statusCode(), -1, "unreadable registry answer to " + path, e);
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static <K, V> Map<K, V> lru() {
        return Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > CACHE_SIZE;
            }
        });
    }
}
