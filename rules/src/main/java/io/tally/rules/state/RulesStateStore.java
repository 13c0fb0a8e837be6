package io.tally.rules.state;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.CosmosItemRequestOptions;
import com.azure.cosmos.models.CosmosItemResponse;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Optional;

/**
 * The deployment's {@link RulesState}, one document in the bucket container ({@code pk} {@value RulesState#PK}, {@code id}
 * {@value RulesState#ID}). Why Cosmos rather than a compacted topic: read-service, which must know what each grade can
 * answer, reaches only Cosmos, and every process that reads the record already holds a client for that container. Every
 * change is a replace conditional on the ETag read, so two {@code apply}s (or an apply and a backfill marking its grade
 * complete) never overwrite each other: the loser reads again and decides again.
 */
public final class RulesStateStore {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final CosmosAsyncContainer container;

    public RulesStateStore(CosmosAsyncContainer container) {
        this.container = container;
    }

    /** The record and the ETag to change it under. */
    public record Stored(RulesState state, String etag) {}

    /** Thrown when the record changed since it was read (or was created by someone else first). */
    public static final class Conflict extends RuntimeException {
        Conflict(String message) {
            super(message);
        }
    }

    public Optional<Stored> read() {
        try {
            CosmosItemResponse<ObjectNode> r = container.readItem(RulesState.ID, new PartitionKey(RulesState.PK), ObjectNode.class)
                    .block(TIMEOUT);
            return Optional.of(new Stored(RulesState.fromJson(r.getItem()), r.getETag()));
        } catch (CosmosException e) {
            if (e.getStatusCode() == 404) return Optional.empty();
            throw e;
        }
    }

    /** Writes the first record; {@link Conflict} when one exists. */
    public Stored create(RulesState state) {
        try {
            CosmosItemResponse<ObjectNode> r = container.createItem(state.toJson(), new PartitionKey(RulesState.PK),
                    new CosmosItemRequestOptions()).block(TIMEOUT);
            return new Stored(state, r.getETag());
        } catch (CosmosException e) {
            if (e.getStatusCode() == 409) throw new Conflict("a rules-state record was written meanwhile");
            throw e;
        }
    }

    /** Replaces the record read as {@code previous}; {@link Conflict} when it changed since. */
    public Stored replace(Stored previous, RulesState next) {
        try {
            CosmosItemResponse<ObjectNode> r = container.replaceItem(next.toJson(), RulesState.ID, new PartitionKey(RulesState.PK),
                    new CosmosItemRequestOptions().setIfMatchETag(previous.etag())).block(TIMEOUT);
            return new Stored(next, r.getETag());
        } catch (CosmosException e) {
            if (e.getStatusCode() == 412) {
                throw new Conflict("the rules-state record changed since generation " + previous.state().generation() + " was read");
            }
            throw e;
        }
    }
}
