package io.tally.ingest.sink;

/**
 * What the sink does with the status of one bulk operation. Pure and stateless; the table is pinned by
 * {@code CosmosStatusClassifierTest}.
 *
 * <p>Layering: with {@code sink.sdk-throttle-retries=0} (the default) the SDK hands every 429 to the sink,
 * which retries it once per 429 after {@code x-ms-retry-after-ms} and cuts its concurrency (AIMD), so a
 * throttle is never retried by both layers. 449 and 410/1000 are retried inside the SDK before they
 * reach us; should they arrive anyway they are retried here too.
 *
 * <p>The write protocol (see {@link WriteKind}) gives 404 and 409 a meaning of their own: a conditional
 * patch answers 404 when the bucket does not exist yet (the sink then creates it) and a create answers
 * 409 when another writer created it first (the sink patches it). 412 means the stored {@code ver} is
 * already at least ours: a stale write that was rightly refused, which counts as success.
 */
public final class CosmosStatusClassifier {

    public enum Decision {
        /** Written. */
        SUCCESS,
        /** Not written, and must not be: a newer (or equal) version is stored. Counts as success. */
        IGNORE,
        /** The patch found no document: create it (no backoff, not an error). */
        CREATE_INSTEAD,
        /** The create found a document: patch it conditionally (no backoff, not an error). */
        PATCH_INSTEAD,
        /** Transient: retry after a backoff. */
        RETRY,
        /** Transient and a sign of congestion: retry after a backoff and cut concurrency. */
        RETRY_CONGESTED,
        /** Will never succeed: dead-letter it and go on. */
        FAIL
    }

    private CosmosStatusClassifier() {}

    /**
     * @param status    per-operation status; 0 when the operation produced no response (client-side failure)
     * @param subStatus Cosmos sub-status, 0 when none
     * @param kind      the operation that got the status
     */
    public static Decision classify(int status, int subStatus, WriteKind kind) {
        if (status >= 200 && status < 300) return Decision.SUCCESS;
        return switch (status) {
            case 412 -> Decision.IGNORE;
            // 404/0 on a patch: no such bucket yet. 404/1002 (read session not available) is transient.
            case 404 -> subStatus == 0 && kind == WriteKind.PATCH_IF_NEWER ? Decision.CREATE_INSTEAD : Decision.RETRY;
            case 409 -> kind == WriteKind.CREATE ? Decision.PATCH_INSTEAD : Decision.RETRY;
            case 429 -> Decision.RETRY_CONGESTED;
            // 408: request timeout (client end-to-end or service); 503: service unavailable. Both mean "too much"
            // as often as "broken", so they also cut concurrency.
            case 408, 503 -> Decision.RETRY_CONGESTED;
            // 410 gone (partition moved/split, name cache), 449 retry-with (concurrent update inside the service),
            // 500 internal error (seen transient in the field), 0 = connection lost without an answer.
            case 410, 449, 500, 0 -> Decision.RETRY;
            // Bad request, entity too large, unprocessable: the document itself is wrong.
            case 400, 413, 422 -> Decision.FAIL;
            // 401/403: credentials or firewall; retrying cannot help, but neither can dead-lettering every
            // document: they stall the sink (RETRY reaches the attempt bound, then backpressure) and alert.
            default -> status >= 400 && status < 500 && status != 401 && status != 403 ? Decision.FAIL : Decision.RETRY;
        };
    }
}
