package io.tally.schemas.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client for the Confluent Schema Registry REST API (any server that speaks it: Confluent, AxonOps,
 * Karapace, Redpanda). Only what an Avro serde needs: register, look up, fetch by id, latest version,
 * per-subject compatibility.
 *
 * <p><b>Threads:</b> thread-safe; one instance is meant to be shared by every serde of a process. Calls
 * block the calling thread for at most about {@code attempts x URLs x requestTimeout + backoffs}.
 *
 * <p><b>Caches:</b> ids and schemas never change once registered, so id &rarr; schema and
 * (subject, schema) &rarr; id are cached without expiry in LRU maps bounded by
 * {@link RegistryClientSettings#cacheCapacity()}; a subject's latest version can change and is kept for
 * {@link RegistryClientSettings#latestCacheTtl()}. An id the registry does not know (40403) is remembered for
 * {@link RegistryClientSettings#missingIdCacheTtl()} when that is set, so records carrying it fail without a request
 * each. Two threads missing the cache at once may both ask the registry; the answers are the same, so that is
 * cheaper than a lock around I/O.
 *
 * <p><b>Errors:</b> every failure is a {@link SchemaRegistryException}. I/O errors and 5xx fail over to
 * the next URL at once, and when every URL failed the round is repeated after a jittered exponential
 * backoff, up to {@link RetryPolicy#maxAttempts()} rounds. 4xx answers are thrown at once. The URL that
 * answered last is tried first next time, so a dead first URL costs one failover, not one per call.
 */
public final class SchemaRegistryClient {
    private static final Logger log = LoggerFactory.getLogger(SchemaRegistryClient.class);
    private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final String ACCEPT = CONTENT_TYPE + ", application/vnd.schemaregistry+json; q=0.9, application/json; q=0.5";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final RegistryClientSettings settings;
    private final HttpClient http;
    private final Optional<String> authorization;
    private final Map<Integer, Schema> schemaById;
    private final Map<SubjectSchema, Integer> idBySubjectSchema;
    private final Map<String, Latest> latestBySubject;
    /** Ids answered "not found", with when that answer was given (nanoTime); used only with a missing-id TTL. */
    private final Map<Integer, Missing> missingIds;
    /** Index of the URL to try first; a hint, so races between threads are harmless. */
    private volatile int preferredUrl;

    /** A client with default settings for one or more comma-separated URLs (user info becomes basic auth). */
    public SchemaRegistryClient(String urls) {
        this(RegistryClientSettings.forUrls(urls));
    }

    public SchemaRegistryClient(RegistryClientSettings settings) {
        this.settings = settings;
        this.http = HttpClient.newBuilder().connectTimeout(settings.connectTimeout()).build();
        this.authorization = settings.userInfo().map(u ->
                "Basic " + Base64.getEncoder().encodeToString(u.getBytes(StandardCharsets.UTF_8)));
        this.schemaById = lru(settings.cacheCapacity());
        this.idBySubjectSchema = lru(settings.cacheCapacity());
        this.latestBySubject = lru(settings.cacheCapacity());
        this.missingIds = lru(settings.missingCacheSize());
    }

    private record Missing(long sinceNanos, SchemaRegistryException answer) {}

    /** A client from serde configuration keys (see {@link AvroSerdeConfig}). */
    public static SchemaRegistryClient fromConfigs(Map<String, ?> configs) {
        return new SchemaRegistryClient(AvroSerdeConfig.parse(configs).registry());
    }

    public RegistryClientSettings settings() { return settings; }

    /**
     * Registers the schema under the subject and returns its global id. Idempotent on the server: an
     * already registered schema returns its existing id.
     *
     * @throws SchemaRegistryException {@code INCOMPATIBLE} (409) or {@code INVALID_SCHEMA} (422) among others
     */
    public int register(String subject, Schema schema) {
        SubjectSchema key = new SubjectSchema(subject, schema);
        Integer cached = idBySubjectSchema.get(key);
        if (cached != null) return cached;
        JsonNode body = call("POST", "subjects/" + enc(subject) + "/versions", schemaBody(schema));
        int id = requiredInt(body, "id", "register under " + subject);
        idBySubjectSchema.put(key, id);
        schemaById.putIfAbsent(id, schema);
        return id;
    }

    /**
     * The id of a schema already registered under the subject; registers nothing.
     *
     * @throws SchemaRegistryException {@code SUBJECT_NOT_FOUND} (40401) or {@code SCHEMA_NOT_FOUND} (40403)
     *         when it is not registered there
     */
    public int lookup(String subject, Schema schema) {
        SubjectSchema key = new SubjectSchema(subject, schema);
        Integer cached = idBySubjectSchema.get(key);
        if (cached != null) return cached;
        JsonNode body = call("POST", "subjects/" + enc(subject), schemaBody(schema));
        int id = requiredInt(body, "id", "look up under " + subject);
        idBySubjectSchema.put(key, id);
        schemaById.putIfAbsent(id, schema);
        return id;
    }

    /**
     * The schema with this global id.
     *
     * @throws SchemaRegistryException {@code SCHEMA_NOT_FOUND} (40403) for an unknown id
     */
    public Schema schemaById(int id) {
        Schema cached = schemaById.get(id);
        if (cached != null) return cached;
        Duration missingTtl = settings.missingIdCacheTtl();
        if (!missingTtl.isZero()) {
            Missing m = missingIds.get(id);
            if (m != null && System.nanoTime() - m.sinceNanos() < missingTtl.toNanos()) {
                throw m.answer().withContext("schema id " + id + " (the registry's answer of less than "
                        + missingTtl.toMillis() + " ms ago, " + AvroSerdeConfig.MISSING_ID_CACHE_TTL_SEC + ")");
            }
        }
        JsonNode body;
        try {
            body = call("GET", "schemas/ids/" + id, null);
        } catch (SchemaRegistryException e) {
            // Only the registry's own "no such id": an outage or a refusal says nothing about the id.
            if (!missingTtl.isZero() && e.kind() == SchemaRegistryException.Kind.SCHEMA_NOT_FOUND) {
                missingIds.put(id, new Missing(System.nanoTime(), e));
            }
            throw e;
        }
        Schema schema = parseSchema(body, "schema id " + id);
        schemaById.put(id, schema);
        return schema;
    }

    /**
     * The subject's latest version, cached for {@link RegistryClientSettings#latestCacheTtl()}.
     *
     * @throws SchemaRegistryException {@code SUBJECT_NOT_FOUND} (40401) for an unknown subject
     */
    public RegisteredSchema latest(String subject) {
        Latest cached = latestBySubject.get(subject);
        Duration ttl = settings.latestCacheTtl();
        if (cached != null && (ttl == null || System.nanoTime() - cached.fetchedAtNanos < ttl.toNanos())) {
            return cached.schema;
        }
        JsonNode body = call("GET", "subjects/" + enc(subject) + "/versions/latest", null);
        String what = "latest version of " + subject;
        RegisteredSchema latest = new RegisteredSchema(subject, requiredInt(body, "id", what),
                requiredInt(body, "version", what), parseSchema(body, what));
        schemaById.putIfAbsent(latest.id(), latest.schema());
        latestBySubject.put(subject, new Latest(latest, System.nanoTime()));
        return latest;
    }

    /** Every subject the registry has (not cached: a check at start asks once). */
    public List<String> subjects() {
        JsonNode body = call("GET", "subjects", null);
        List<String> out = new java.util.ArrayList<>();
        body.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** Sets the subject's compatibility level (BACKWARD, FORWARD, FULL, NONE, *_TRANSITIVE). */
    public void setCompatibility(String subject, String level) {
        ObjectNode body = JSON.createObjectNode().put("compatibility", level);
        call("PUT", "config/" + enc(subject), body.toString());
    }

    private JsonNode call(String method, String path, String body) {
        List<URI> urls = settings.urls();
        RetryPolicy retry = settings.retry();
        SchemaRegistryException last = null;
        int calls = 0;
        for (int attempt = 1; attempt <= retry.maxAttempts(); attempt++) {
            if (attempt > 1) sleep(retry.backoff(attempt - 1), method, path);
            int first = preferredUrl;
            for (int i = 0; i < urls.size(); i++) {
                int index = (first + i) % urls.size();
                calls++;
                try {
                    JsonNode answer = once(urls.get(index), method, path, body);
                    if (index != first) preferredUrl = index;
                    return answer;
                } catch (SchemaRegistryException e) {
                    if (!e.isRetriable()) throw e;
                    last = e;
                    log.debug("schema registry {} {} {} failed (attempt {} of {}): {}",
                            method, urls.get(index), path, attempt, retry.maxAttempts(), e.getMessage());
                }
            }
        }
        throw last.withContext("Gave up after " + calls + " calls to " + urls.size() + " registry URL(s) in "
                + retry.maxAttempts() + " attempt(s)");
    }

    private JsonNode once(URI base, String method, String path, String body) {
        URI uri = base.resolve(path);
        String request = method + " " + uri;
        HttpRequest.Builder req = HttpRequest.newBuilder(uri)
                .timeout(settings.requestTimeout())
                .header("Accept", ACCEPT);
        authorization.ifPresent(a -> req.header("Authorization", a));
        if (body != null) {
            req.header("Content-Type", CONTENT_TYPE).method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            req.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> resp;
        try {
            resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new SchemaRegistryException(-1, -1, request + " got no answer: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SchemaRegistryException(-1, -1, request + " was interrupted", e);
        }
        if (resp.statusCode() / 100 != 2) {
            throw SchemaRegistryException.fromResponse(request, resp.statusCode(), resp.body());
        }
        try {
            return JSON.readTree(resp.body());
        } catch (IOException e) {
            throw new SchemaRegistryException(resp.statusCode(), -1, request + " answered " + resp.statusCode()
                    + " with a body that is not JSON: " + SchemaRegistryException.shorten(resp.body()), e);
        }
    }

    private static void sleep(Duration wait, String method, String path) {
        try {
            Thread.sleep(wait.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SchemaRegistryException(-1, -1, method + " " + path + " was interrupted while backing off", e);
        }
    }

    private static String schemaBody(Schema schema) {
        // schemaType is omitted: AVRO is the API's default, and older registries reject the field.
        return JSON.createObjectNode().put("schema", schema.toString()).toString();
    }

    private static int requiredInt(JsonNode body, String field, String what) {
        JsonNode v = body == null ? null : body.get(field);
        if (v == null || !v.canConvertToInt()) {
            throw new SchemaRegistryException(200, -1, "registry answer to " + what + " has no integer '" + field
                    + "': " + SchemaRegistryException.shorten(String.valueOf(body)), null);
        }
        return v.asInt();
    }

    private static Schema parseSchema(JsonNode body, String what) {
        JsonNode text = body == null ? null : body.get("schema");
        String type = body == null ? "AVRO" : body.path("schemaType").asText("AVRO");
        if (text == null || !text.isTextual() || !"AVRO".equals(type)) {
            throw new SchemaRegistryException(200, -1, "registry answer for " + what + " holds no Avro schema (schemaType "
                    + type + ")", null);
        }
        try {
            return new Schema.Parser().parse(text.asText());
        } catch (RuntimeException e) {
            throw new SchemaRegistryException(200, -1, "registry answer for " + what + " is not a valid Avro schema: "
                    + e.getMessage(), e);
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static <K, V> Map<K, V> lru(int capacity) {
        return Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > capacity;
            }
        });
    }

    /** Cache key; Schema.equals compares structure (names, fields, types, defaults), not the JSON text. */
    private record SubjectSchema(String subject, Schema schema) {}

    private record Latest(RegisteredSchema schema, long fetchedAtNanos) {}
}
