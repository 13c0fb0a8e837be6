package io.tally.testsupport.cosmos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Client of the local Cosmos endpoint's control API (plain HTTP on 127.0.0.1; see
 * local/cosmos/README.md): fault rules, added latency, provisioned throughput, request counters,
 * event-loop delay.
 *
 * <p>Every call is synchronous and throws {@link IllegalStateException} with the endpoint's answer
 * when it does not succeed. Thread-safe.
 */
public final class CosmosControl {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final URI base;
    private final HttpClient http;

    public CosmosControl(URI base) {
        this.base = base;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    }

    public URI base() { return base; }

    public JsonNode health() {
        return call("GET", "/health", null);
    }

    /** The health document, or empty when nothing answers within {@code timeout}. */
    public Optional<JsonNode> tryHealth(Duration timeout) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/health")).timeout(timeout).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? Optional.of(JSON.readTree(r.body())) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** Adds a fault rule; returns its id (for {@link #removeFault(String)} and {@link #faults()}). */
    public String injectFault(Fault fault) {
        JsonNode answer = call("POST", "/faults", fault.spec);
        return answer.get("rules").get(0).get("id").asText();
    }

    /** The rules with their hit counts ({@code hits}, {@code remaining}, {@code active}). */
    public List<JsonNode> faults() {
        List<JsonNode> rules = new ArrayList<>();
        call("GET", "/faults", null).get("rules").forEach(rules::add);
        return rules;
    }

    /** Hit count of one rule. */
    public int faultHits(String id) {
        return faults().stream().filter(r -> id.equals(r.path("id").asText()))
                .findFirst().orElseThrow(() -> new IllegalStateException("no fault rule " + id))
                .get("hits").asInt();
    }

    public void removeFault(String id) {
        call("DELETE", "/faults/" + id, null);
    }

    public void clearFaults() {
        call("DELETE", "/faults", null);
    }

    /** Delays every request by {@code delayMs} (0 removes the added latency). */
    public void setLatency(int delayMs) {
        ObjectNode body = JSON.createObjectNode().put("delayMs", delayMs);
        call("PUT", "/latency", body);
    }

    /** RU/s budget of every container without its own setting; null or 0 = unlimited. */
    public void setDefaultThroughput(Double ruPerSecond) {
        ObjectNode body = JSON.createObjectNode();
        if (ruPerSecond == null) body.putNull("ruPerSecond");
        else body.put("ruPerSecond", ruPerSecond);
        call("PUT", "/throughput", body);
    }

    /** RU/s budget of one container (by database and container id); null = follow the default, 0 = unlimited. */
    public void setThroughput(String database, String container, Double ruPerSecond) {
        ObjectNode body = JSON.createObjectNode().put("database", database).put("container", container);
        if (ruPerSecond == null) body.putNull("ruPerSecond");
        else body.put("ruPerSecond", ruPerSecond);
        call("PUT", "/throughput", body);
    }

    public JsonNode throughput() {
        return call("GET", "/throughput", null);
    }

    public Stats stats() {
        return new Stats(call("GET", "/stats", null));
    }

    public void resetStats() {
        call("POST", "/stats/reset", null);
    }

    /**
     * Event-loop delay of the endpoint since the last {@link #resetLoopDelay()} (or its start): how late
     * its single thread got to run, sampled every millisecond, with the requests served meanwhile.
     */
    public LoopDelay loopDelay() {
        JsonNode n = call("GET", "/loop", null);
        return new LoopDelay(n.path("p50Ms").asDouble(), n.path("p99Ms").asDouble(), n.path("maxMs").asDouble(),
                n.path("meanMs").asDouble(), n.path("samples").asLong(), n.path("requests").asLong());
    }

    /** Starts a new event-loop delay window. */
    public void resetLoopDelay() {
        call("POST", "/loop/reset", null);
    }

    /**
     * Registers an application with the endpoint's local Entra ID token issuer; returns the authority host to give
     * azure-identity ({@code https://127.0.0.1:PORT/}, the Cosmos port: see local/cosmos/README.md, "Entra ID tokens").
     */
    public String registerEntraClient(String clientId, String clientSecret) {
        ObjectNode body = JSON.createObjectNode().put("clientId", clientId).put("clientSecret", clientSecret);
        return call("POST", "/entra/clients", body).get("authorityHost").asText();
    }

    /** The local token issuer's state: authority host, registered client ids, accepted audiences, tokens issued, tokens refused. */
    public JsonNode entra() {
        return call("GET", "/entra", null);
    }

    /**
     * A token minted by the local issuer without the token endpoint, for tokens a client could not get from it: {@code spec}
     * may set {@code audience}, {@code tenant}, {@code clientId}, {@code lifetimeSeconds} (negative = expired),
     * {@code notBeforeSeconds}, {@code signWithForeignKey}, {@code issuer}.
     */
    public String mintEntraToken(ObjectNode spec) {
        return call("POST", "/entra/tokens", spec).get("accessToken").asText();
    }

    /** A spec for {@link #mintEntraToken(ObjectNode)}. */
    public static ObjectNode tokenSpec() {
        return JSON.createObjectNode();
    }

    /** Clears fault rules, counters and throughput settings made at run time. */
    public void reset() {
        call("POST", "/reset", null);
    }

    private JsonNode call(String method, String path, JsonNode body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT);
        if (body == null) b.method(method, HttpRequest.BodyPublishers.noBody());
        else b.header("content-type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
        try {
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() / 100 != 2) {
                throw new IllegalStateException(method + " " + base.resolve(path) + " answered " + r.statusCode() + ": " + r.body());
            }
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new IllegalStateException(method + " " + base.resolve(path) + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted calling " + base.resolve(path), e);
        }
    }

    /**
     * A fault rule. Matchers narrow which requests it hits (all given ones must hold); the action is a
     * status (+ sub-status, retry-after), a dropped connection, or only a delay. Example:
     * {@code Fault.status(429).retryAfterMs(50).kind("write").count(2)}.
     */
    public static final class Fault {
        private final ObjectNode spec = JSON.createObjectNode();

        private Fault() {}

        /** Answer this status (400-599) instead of executing the request. */
        public static Fault status(int status) {
            Fault f = new Fault();
            f.spec.put("status", status);
            return f;
        }

        /** Close the connection without answering. */
        public static Fault drop() {
            Fault f = new Fault();
            f.spec.put("drop", true);
            return f;
        }

        /** Only delay matching requests, then execute them. */
        public static Fault delay(int delayMs) {
            return new Fault().delayMs(delayMs);
        }

        public Fault subStatus(int subStatus) { spec.put("subStatus", subStatus); return this; }
        public Fault retryAfterMs(int ms) { spec.put("retryAfterMs", ms); return this; }
        public Fault delayMs(int ms) { spec.put("delayMs", ms); return this; }
        /** read, write, batch, query, queryplan, readfeed or metadata. */
        public Fault kind(String kind) { spec.put("kind", kind); return this; }
        public Fault method(String method) { spec.put("method", method); return this; }
        /** A regular expression the request path must contain a match of. */
        public Fault path(String regex) { spec.put("path", regex); return this; }
        public Fault pathPrefix(String prefix) { spec.put("pathPrefix", prefix); return this; }
        public Fault header(String name) { spec.put("header", name); return this; }
        public Fault header(String name, String valueRegex) { spec.put("header", name).put("headerValue", valueRegex); return this; }
        /** Apply to the first {@code n} matching requests only. */
        public Fault count(int n) { spec.put("count", n); return this; }
        /** Apply for this long after the rule is added. */
        public Fault duration(Duration d) { spec.put("durationMs", d.toMillis()); return this; }
        public Fault id(String id) { spec.put("id", id); return this; }

        @Override
        public String toString() { return spec.toString(); }
    }

    /**
     * GET /loop: percentiles, maximum and mean of the event-loop delay in milliseconds over {@code samples}
     * samples, and the Cosmos requests served in the same window.
     */
    public record LoopDelay(double p50Ms, double p99Ms, double maxMs, double meanMs, long samples, long requests) {}

    /** Counters of GET /stats. */
    public record Stats(JsonNode raw) {
        public long requests() { return raw.path("requests").asLong(); }
        /** Every 429 answered, injected or from the throughput budget. */
        public long status429() { return raw.path("status429").asLong(); }
        /** Requests refused by the throughput budget. */
        public long throttled() { return raw.path("throttled").asLong(); }
        /** Operations inside bulk batches refused by the throughput budget. */
        public long batchOperationsThrottled() { return raw.path("batchOperationsThrottled").asLong(); }
        /** Operations inside bulk batches. */
        public long batchOperations() { return raw.path("batchOperations").asLong(); }
        /** Operations inside bulk batches whose result carried the document back. */
        public long batchOperationsWithBody() { return raw.path("batchOperationsWithBody").asLong(); }
        public double requestCharge() { return raw.path("requestCharge").asDouble(); }
        /** Bytes of every request body the endpoint received. */
        public long requestBytes() { return raw.path("requestBytes").asLong(); }
        public long count(String kind) { return raw.path("byKind").path(kind).asLong(); }
        public long count(String kind, int status) { return raw.path("byKindStatus").path(kind + ":" + status).asLong(); }
        public long dropped() { return raw.path("dropped").asLong(); }
    }
}
