package io.tally.ingest.sink;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.ThroughputControlGroupConfig;
import com.azure.cosmos.ThroughputControlGroupConfigBuilder;
import com.azure.cosmos.models.CosmosBulkExecutionOptions;
import com.azure.cosmos.models.CosmosBulkItemRequestOptions;
import com.azure.cosmos.models.CosmosBulkItemResponse;
import com.azure.cosmos.models.CosmosBulkOperationResponse;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosBulkPatchItemRequestOptions;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosPatchOperations;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.util.RawValue;
import io.tally.cosmos.CosmosClients;
import io.tally.cosmos.CosmosSettings;
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
    private final String groupName;

    public CosmosBulkExecutor(CosmosAsyncContainer container, SinkSettings settings) {
        this.container = container;
        this.settings = settings;
        this.budgeted = settings.ruBudget() > 0;
        this.groupName = settings.fleetBudgetControlContainer().isEmpty() ? THROUGHPUT_GROUP : THROUGHPUT_GROUP + "-" + settings.groupId();
        if (budgeted && settings.fleetBudgetControlContainer().isEmpty()) {
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

    /**
     * The fleet's budget ({@code sink.ru-budget.fleet-control-container}): a global group, which the SDK splits among
     * the sinks that renewed their lease item in the control container lately, by their recent use; an item not
     * renewed within the expire interval drops out and its share goes to the others. Creates the control container
     * when {@code cosmos.create-if-missing} is on. Call before the first write; without a fleet budget it does nothing.
     */
    public static void enableFleetBudget(CosmosAsyncClient client, CosmosAsyncContainer container, SinkSettings settings,
                                         CosmosSettings cosmos) {
        if (settings.ruBudget() == 0 || settings.fleetBudgetControlContainer().isEmpty()) return;
        CosmosClients.throughputControlContainer(client, cosmos, settings.fleetBudgetControlContainer());
        ThroughputControlGroupConfig group = new ThroughputControlGroupConfigBuilder()
                .groupName(THROUGHPUT_GROUP + "-" + settings.groupId())
                .targetThroughput(settings.ruBudget())
                .build();
        container.enableGlobalThroughputControlGroup(group, client.createGlobalThroughputControlConfigBuilder(
                        container.getDatabase().getId(), settings.fleetBudgetControlContainer())
                .setControlItemRenewInterval(FLEET_RENEW)
                .setControlItemExpireInterval(FLEET_EXPIRE)
                .build());
        log.info("sink writes of group {} limited to {} RU/s together (global throughput control, control container {})",
                settings.groupId(), settings.ruBudget(), settings.fleetBudgetControlContainer());
    }

    // The SDK's smallest renew interval is 5 s, and it wants the expiry above twice that: a dead sink's share is
    // back with the others within expire + renew = 16 s.
    static final Duration FLEET_RENEW = Duration.ofSeconds(5);
    static final Duration FLEET_EXPIRE = Duration.ofSeconds(11);

    @Override
    public Flux<ItemResult> execute(List<BucketWrite> writes) {
        List<CosmosItemOperation> ops = new ArrayList<>(writes.size());
        for (BucketWrite w : writes) ops.add(operation(w));
        CosmosBulkExecutionOptions options = new CosmosBulkExecutionOptions()
                .setInitialMicroBatchSize(settings.microBatchSize())
                .setMaxMicroBatchSize(settings.microBatchSize())
                .setMaxMicroBatchConcurrency(settings.microBatchConcurrency());
        if (budgeted) options.setThroughputControlGroupName(groupName);
        return container.<BucketWrite>executeBulkOperations(Flux.fromIterable(ops), options).map(CosmosBulkExecutor::result);
    }

    private static final CosmosBulkItemRequestOptions NO_CONTENT = new CosmosBulkItemRequestOptions().setContentResponseOnWriteEnabled(false);

    static CosmosItemOperation operation(BucketWrite w) {
        EntityBucketJson.Parts d = w.doc;
        PartitionKey pk = new PartitionKey(d.pk());
        // No document back (the service's minimalReturnPreference): the sink reads only status and charge, and a
        // document echoed per operation costs its bytes twice more, on the wire and in parsing the response.
        if (w.kind == WriteKind.CREATE) {
            return CosmosBulkOperations.getCreateItemOperation(raw(d.whole()), pk, NO_CONTENT, w);
        }
        // One conditional operation replaces every value of the document: each grade map is set whole (one patch
        // operation each, whatever the number of grades: at most 7 of the 10 the service allows). unit, bucket, rule and page follow
        // from the id and never change; pk and id cannot be patched.
        CosmosPatchOperations patch = CosmosPatchOperations.create()
                .set("/grades", raw(d.grades()))
                .set("/qualified", raw(d.qualified()))
                .set("/spilled", raw(d.spilled()))
                .set("/ver", d.ver());
        // an hour's nested minutes, or its null once they moved to minute documents (EntityBucketLayout)
        String minutes = d.minutes();
        if (minutes != null) patch.set("/minutes", raw(minutes));
        if (d.updatedAt() != null) patch.set("/updatedAt", d.updatedAt());
        if (d.ttl() != null) patch.set("/ttl", d.ttl());
        CosmosBulkPatchItemRequestOptions options = new CosmosBulkPatchItemRequestOptions()
                .setContentResponseOnWriteEnabled(false)
                .setFilterPredicate("FROM c WHERE c.ver < " + d.ver()); // a long literal: nothing to inject
        return CosmosBulkOperations.getPatchItemOperation(d.id(), pk, patch, options, w);
    }

    /**
     * JSON text the SDK writes as it is: it takes a JSON node as a value unchanged, and a node holding a {@link RawValue}
     * serializes as that text, so the operation is never a tree of the document's grades. The text was checked when
     * the write was decoded ({@link EntityBucketJson#parts}).
     */
    static JsonNode raw(String json) {
        return JsonNodeFactory.instance.rawValueNode(new RawValue(json));
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
