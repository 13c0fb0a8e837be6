package io.tally.ingest.sink;

import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * The seam before {@code executeBulkOperations}: one bulk call, one result per write. Production uses
 * {@link CosmosBulkExecutor}; unit tests script per-item statuses without Cosmos.
 */
@FunctionalInterface
public interface BulkExecutor {

    /**
     * The outcome of one operation.
     *
     * @param status        per-operation status; 0 when there was no response (connection lost, client error)
     * @param retryAfter    the service's {@code x-ms-retry-after-ms}, zero when none
     * @param requestCharge RU the operation cost
     * @param error         the exception behind a missing response, else null
     */
    record ItemResult(BucketWrite write, int status, int subStatus, Duration retryAfter, double requestCharge, Throwable error) {
        public static ItemResult of(BucketWrite write, int status) {
            return new ItemResult(write, status, 0, Duration.ZERO, 1.0, null);
        }
    }

    /** Writes every operation once; emits exactly one result per write, in any order. */
    Flux<ItemResult> execute(List<BucketWrite> writes);
}
