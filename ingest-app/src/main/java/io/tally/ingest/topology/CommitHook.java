package io.tally.ingest.topology;

import java.util.Map;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;

/**
 * A state store that holds nothing and calls back when Kafka Streams flushes its record caches: at the
 * start of every commit, before the task's output is flushed and the transaction committed, and before a
 * clean task close. What a processor forwards from the callback is therefore part of the transaction
 * that commits the input it came from, the contract the DSL's cached aggregations rely on. Unlike a
 * flush listener on a real cached store, it fires only at those points, never because the shared record
 * cache ran full.
 *
 * <p>Kafka Streams offers this hook to its own stores only: the task flushes every registered store that
 * is a {@code CachedStateStore} (an internal interface). Kafka is pinned in the parent pom, and
 * TallyTopologyTest and the aggregation integration tests fail if an upgrade changes the contract.
 */
final class CommitHook implements StateStore, CachedStateStore<Object, Object> {
    private final String name;
    private Runnable onFlush = () -> {};
    private boolean open;

    private CommitHook(String name) {
        this.name = name;
    }

    static StoreBuilder<CommitHook> builder(String name) {
        return new StoreBuilder<>() {
            @Override public StoreBuilder<CommitHook> withCachingEnabled() { return this; }
            @Override public StoreBuilder<CommitHook> withCachingDisabled() { return this; }
            @Override public StoreBuilder<CommitHook> withLoggingEnabled(Map<String, String> config) { return this; }
            @Override public StoreBuilder<CommitHook> withLoggingDisabled() { return this; }
            @Override public CommitHook build() { return new CommitHook(name); }
            @Override public Map<String, String> logConfig() { return Map.of(); }
            @Override public boolean loggingEnabled() { return false; } // holds nothing: no changelog
            @Override public String name() { return name; }
        };
    }

    /**
     * Runs {@code action} at every cache flush as the processor owning {@code processorContext}, so its
     * {@code forward} calls reach that processor's children. Call from the processor's {@code init}.
     * Returns false when the context is not Kafka Streams' own (the hook cannot be installed).
     */
    boolean install(ProcessorContext<?, ?> processorContext, Runnable action) {
        if (!(processorContext instanceof InternalProcessorContext<?, ?> internal)) return false;
        ProcessorNode<?, ?, ?, ?> node = internal.currentNode();
        onFlush = () -> {
            ProcessorNode<?, ?, ?, ?> previousNode = internal.currentNode();
            ProcessorRecordContext previousRecord = internal.recordContext();
            internal.setCurrentNode(node);
            // Like a punctuation: no input record is current while the task commits.
            internal.setRecordContext(new ProcessorRecordContext(internal.currentStreamTimeMs(), -1L, -1, null, new RecordHeaders()));
            try {
                action.run();
            } finally {
                internal.setRecordContext(previousRecord);
                internal.setCurrentNode(previousNode);
            }
        };
        return true;
    }

    @Override
    public void flushCache() {
        onFlush.run();
    }

    @Override
    public boolean setFlushListener(CacheFlushListener<Object, Object> listener, boolean sendOldValues) {
        return false;
    }

    @Override
    public void clearCache() {}

    @Override
    public String name() {
        return name;
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {
        context.register(root, (key, value) -> {});
        open = true;
    }

    @Override
    public void close() {
        open = false;
    }

    @Override
    public boolean persistent() {
        return false;
    }

    @Override
    public boolean isOpen() {
        return open;
    }
}
