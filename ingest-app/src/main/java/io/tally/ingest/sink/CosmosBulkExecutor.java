package io.tally.ingest.sink;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.ThroughputControlGroupConfig;
import com.azure.cosmos.ThroughputControlGroupConfigBuilder;
import com.azure.cosmos.models.CosmosBulkExecutionOptions;
import com.azure.cosmos.models.CosmosBulkItemResponse;
import com.azure.cosmos.models.CosmosBulkOperationResponse;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosBulkPatchItemRequestOptions;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;

/**
 * {@link BulkExecutor} over {@code CosmosAsyncContainer.executeBulkOperations}: each write becomes a
 * conditional patch or a create (see {@link WriteKind}) with its {@link BucketWrite} as the context,
 * no content on write, micro-batch size and concurrency from {@link SinkSettings}, and the sink's
 * throughput control group when an RU budget is set.
 */
public final class CosmosBulkExecutor implements BulkExecutor {
    private static final Logger log = LoggerFactory.getLogger(CosmosBulkExecutor.class);
    static final String THROUGHPUT_GROUP = "tally-sink";

    private final CosmosAsyncContainer container;
    private final SinkSettings settings;
    private final boolean budgeted;

    public CosmosBulkExecutor(CosmosAsyncContainer container, SinkSettings settings) {
        this.container = container;
        this.settings = settings;
        this.budgeted = settings.ruBudget() > 0;
        if (budgeted) {
            // A local group: each sink process meters itself (no shared lease container needed). Requests over
            // the target are refused client-side with a 429 before they cost anything, and reach the sink's
            // retry and AIMD limiter like a throttle from the service.
            ThroughputControlGroupConfig group = new ThroughputControlGroupConfigBuilder()
                    .groupName(THROUGHPUT_GROUP)
                    .targetThroughput(settings.ruBudget())
                    .build();
            container.enableLocalThroughputControlGroup(group);
            log.info("sink writes limited to {} RU/s (throughput control group {})", settings.ruBudget(), THROUGHPUT_GROUP);
        }
    }

    @Override
    public Flux<ItemResult> execute(List<BucketWrite> writes) {
        List<CosmosItemOperation> ops = new ArrayList<>(writes.size());
        for (BucketWrite w : writes) ops.add(operation(w));
        CosmosBulkExecutionOptions options = new CosmosBulkExecutionOptions()
                .setInitialMicroBatchSize(settings.microBatchSize())
                .setMaxMicroBatchSize(settings.microBatchSize())
                .setMaxMicroBatchConcurrency(settings.microBatchConcurrency());
        if (budgeted) options.setThroughputControlGroupName(THROUGHPUT_GROUP);
        return container.<BucketWrite>executeBulkOperations(Flux.fromIterable(ops), options).map(CosmosBulkExecutor::result);
    }

    static CosmosItemOperation operation(BucketWrite w) {
        EntityBucket d = w.doc;
        PartitionKey pk = new PartitionKey(d.pk());
        // Our own tree: decimals stay decimals (the SDK writes a DecimalNode as it is).
        ObjectNode json = EntityBucketJson.tree(d);
        if (w.kind == WriteKind.CREATE) return CosmosBulkOperations.getCreateItemOperation(json, pk, w);
        // One conditional operation replaces every value of the document: each grade map is set whole (one patch
        // operation each, whatever the number of grades; the service allows 10). unit, bucket, rule and page follow
        // from the id and never change; pk and id cannot be patched.
        CosmosPatchOperations patch = CosmosPatchOperations.create()
                .set("/grades", json.get("grades"))
                .set("/qualified", json.get("qualified"))
                .set("/spilled", json.get("spilled"))
                .set("/ver", d.ver());
        if (d.updatedAt() != null) patch.set("/updatedAt", d.updatedAt());
        if (d.ttl() != null) patch.set("/ttl", d.ttl());
        CosmosBulkPatchItemRequestOptions options = new CosmosBulkPatchItemRequestOptions()
                .setFilterPredicate("FROM c WHERE c.ver < " + d.ver()); // a long literal: nothing to inject
        return CosmosBulkOperations.getPatchItemOperation(d.id(), pk, patch, options, w);
    }

    static ItemResult result(CosmosBulkOperationResponse<BucketWrite> r) {
        BucketWrite w = r.getOperation().getContext();
        CosmosBulkItemResponse resp = r.getResponse();
        if (resp != null) {
            Duration retryAfter = resp.getRetryAfterDuration() == null ? Duration.ZERO : resp.getRetryAfterDuration();
            return new ItemResult(w, resp.getStatusCode(), resp.getSubStatusCode(), retryAfter, resp.getRequestCharge(), null);
        }
        Throwable e = r.getException();
        if (e instanceof CosmosException ce) {
            Duration retryAfter = ce.getRetryAfterDuration() == null ? Duration.ZERO : ce.getRetryAfterDuration();
            return new ItemResult(w, ce.getStatusCode(), ce.getSubStatusCode(), retryAfter, ce.getRequestCharge(), ce);
        }
        return new ItemResult(w, 0, 0, Duration.ZERO, 0, e);
    }
}
