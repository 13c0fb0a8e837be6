package io.tally.read;

import com.azure.cosmos.CosmosException;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An RFC 9457 problem answer, and the one place that decides which failure becomes which status.
 * Details never carry exception messages, stack traces, Cosmos diagnostics or activity ids: those
 * are logged, the caller gets a fixed sentence.
 *
 * <table>
 *   <caption>failure to status</caption>
 *   <tr><td>invalid input</td><td>400</td></tr>
 *   <tr><td>missing or wrong API key</td><td>401</td></tr>
 *   <tr><td>bucket not found, unknown route</td><td>404</td></tr>
 *   <tr><td>a method other than GET on a known path</td><td>405 + Allow</td></tr>
 *   <tr><td>Cosmos 429 after the SDK's retries</td><td>503 + Retry-After (the SDK's retry-after, rounded up to seconds)</td></tr>
 *   <tr><td>Cosmos 503, 410, 449, 500, 502, dropped connections, client-side 0 (pool exhausted)</td><td>503 + Retry-After: 1</td></tr>
 *   <tr><td>Cosmos 408 (incl. the end-to-end policy's cancellation), request timeout</td><td>504</td></tr>
 *   <tr><td>anything else</td><td>500</td></tr>
 * </table>
 */
final class Problem extends RuntimeException {
    private static final Logger log = LoggerFactory.getLogger(Problem.class);
    static final String TYPE_BASE = "https://tally.io/problems/";

    final int status;
    final String type;
    final String title;
    final String detail;
    final OptionalLong retryAfterSeconds;
    /** The methods a 405 names in its Allow header; null for every other status. */
    private final String allow;

    Problem(int status, String type, String title, String detail, OptionalLong retryAfterSeconds) {
        this(status, type, title, detail, retryAfterSeconds, null);
    }

    private Problem(int status, String type, String title, String detail, OptionalLong retryAfterSeconds, String allow) {
        super(title + ": " + detail, null, false, false); // no stack trace: these are answers, not bugs
        this.status = status;
        this.type = type;
        this.title = title;
        this.detail = detail;
        this.retryAfterSeconds = retryAfterSeconds;
        this.allow = allow;
    }

    static Problem badRequest(String detail) {
        return new Problem(400, TYPE_BASE + "invalid-request", "Invalid request", detail, OptionalLong.empty());
    }

    static Problem notFound(String detail) {
        return new Problem(404, TYPE_BASE + "not-found", "Not found", detail, OptionalLong.empty());
    }

    /**
     * No bucket under this id yet, where one may still appear without a new event: the grade's history before its seam is
     * being counted in (docs/read-api.md, "Rules that change"). A 404, so a client treating it as "none" stays correct
     * once the history is in; its own type, so one that must not may ask again later.
     */
    static Problem notCountedYet(String detail) {
        return new Problem(404, TYPE_BASE + "not-counted-yet", "Not counted yet", detail, OptionalLong.empty());
    }

    /** A known path asked with a method it does not serve; {@code method} is quoted only when it is a short token. */
    static Problem methodNotAllowed(String method, String allow) {
        String named = method.length() <= 20 && method.chars().allMatch(c -> c > 32 && c < 127) ? method + " is" : "This method is";
        return new Problem(405, TYPE_BASE + "method-not-allowed", "Method not allowed",
                named + " not served on this path; allowed: " + allow + ".", OptionalLong.empty(), allow);
    }

    static Problem unauthorized() {
        return new Problem(401, TYPE_BASE + "unauthorized", "Unauthorized",
                "A valid API key is required (header X-API-Key).", OptionalLong.empty());
    }

    static Problem throttled(long retryAfterSeconds) {
        return new Problem(503, TYPE_BASE + "throttled", "Service busy",
                "The store is throttling requests; retry after the indicated time.", OptionalLong.of(retryAfterSeconds));
    }

    static Problem overloaded() {
        return new Problem(503, TYPE_BASE + "overloaded", "Service busy",
                "Too many requests in flight; retry after the indicated time.", OptionalLong.of(1));
    }

    static Problem unavailable() {
        return new Problem(503, TYPE_BASE + "unavailable", "Service unavailable",
                "The store is temporarily unavailable; retry shortly.", OptionalLong.of(1));
    }

    static Problem timeout() {
        return new Problem(504, TYPE_BASE + "timeout", "Timeout", "The store did not answer in time.", OptionalLong.empty());
    }

    static Problem internal() {
        return new Problem(500, TYPE_BASE + "internal", "Internal error", "The request could not be served.", OptionalLong.empty());
    }

    /** Maps any failure of a request to its answer; unexpected ones are logged with the route. */
    static Problem from(Throwable t, String route) {
        if (t instanceof Problem p) return p;
        if (t instanceof TimeoutException) {
            log.warn("{}: request timeout", route);
            return timeout();
        }
        if (t instanceof CosmosException e) {
            int status = e.getStatusCode();
            int sub = e.getSubStatusCode();
            // Diagnostics stay in our log (they name hosts, regions, activity ids); the caller gets none of it.
            if (status == 429) {
                log.warn("{}: Cosmos 429:{} after the SDK's retries, retry-after {}", route, sub, e.getRetryAfterDuration());
                return throttled(retryAfterSeconds(e.getRetryAfterDuration()));
            }
            if (status == 408) {
                log.warn("{}: Cosmos 408:{} (timeout or end-to-end policy)", route, sub);
                return timeout();
            }
            // 0: failed in the client before an answer (connection pool exhausted, connection refused): overload.
            if (status == 0 || status == 503 || status == 410 || status == 449 || status == 500 || status == 502) {
                log.warn("{}: Cosmos {}:{}", route, status, sub);
                return unavailable();
            }
            log.error("{}: unexpected Cosmos {}:{}", route, status, sub);
            if (log.isDebugEnabled()) log.debug("{}: diagnostics {}", route, e.getDiagnostics());
            return internal();
        }
        log.error("{}: unexpected failure", route, t);
        return internal();
    }

    /** Retry-After is whole seconds (RFC 9110); never 0, so a client does not hammer a throttled store. */
    static long retryAfterSeconds(Duration retryAfter) {
        if (retryAfter == null || retryAfter.isNegative() || retryAfter.isZero()) return 1;
        return Math.max(1, (retryAfter.toMillis() + 999) / 1000);
    }

    /** The headers that go with the answer: Retry-After, WWW-Authenticate (401) or Allow (405). */
    Map<String, String> headers() {
        if (retryAfterSeconds.isPresent()) return Map.of("Retry-After", Long.toString(retryAfterSeconds.getAsLong()));
        if (status == 401) return Map.of("WWW-Authenticate", "ApiKey header=\"" + ApiKeyAuth.HEADER + "\"");
        if (allow != null) return Map.of("Allow", allow);
        return Map.of();
    }

    ObjectNode body(String instance) {
        ObjectNode b = JsonNodeFactory.instance.objectNode()
                .put("type", type).put("title", title).put("status", status).put("detail", detail);
        if (instance != null) b.put("instance", instance);
        return b;
    }
}
