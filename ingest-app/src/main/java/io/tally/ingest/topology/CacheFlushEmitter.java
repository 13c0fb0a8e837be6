package io.tally.ingest.topology;

import java.util.function.BiConsumer;
import org.apache.kafka.streams.kstream.internals.Change;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * Emits what a processor wrote to a cached store when Kafka Streams flushes the record cache: before
 * every commit (inside the same transaction) and when the cache evicts. A bucket written a thousand
 * times between two commits is emitted once, with its newest value: the DSL's aggregations emit this
 * way, and stage 5 needs it because it applies several deltas per input record, which the DSL cannot.
 *
 * <p>Kafka Streams offers this hook to its own processors only, through internal interfaces
 * ({@code CacheFlushListener}, {@code InternalProcessorContext}); this class is the one place Tally
 * touches them. Kafka is pinned in the parent pom, and TallyTopologyTest (record cache on) and the
 * aggregation integration tests fail if an upgrade changes the contract.
 */
final class CacheFlushEmitter {
    private CacheFlushEmitter() {}

    /**
     * Calls {@code emit(key, newValue)} for every dirty entry the cache flushes, with the processor's
     * node current so {@code context.forward} reaches its children. Returns false when the store has no
     * cache (statestore.cache.max.bytes=0 still builds one; a store built without caching has none):
     * the caller then emits at once.
     */
    static <K, V> boolean install(TimestampedKeyValueStore<K, V> store, ProcessorContext<?, ?> context, BiConsumer<K, Record<K, V>> emit) {
        if (!(store instanceof WrappedStateStore<?, ?, ?> wrapped) || !(context instanceof InternalProcessorContext<?, ?> internal)) {
            return false;
        }
        ProcessorNode<?, ?, ?, ?> node = internal.currentNode();
        CacheFlushListener<K, ValueAndTimestamp<V>> listener = flushed -> {
            Change<ValueAndTimestamp<V>> change = flushed.value();
            if (change.newValue == null) return; // a delete: stage 5 never deletes
            ProcessorNode<?, ?, ?, ?> previous = internal.currentNode();
            internal.setCurrentNode(node);
            try {
                emit.accept(flushed.key(), flushed.withValue(change.newValue.value()).withTimestamp(change.newValue.timestamp()));
            } finally {
                internal.setCurrentNode(previous);
            }
        };
        @SuppressWarnings("unchecked")
        WrappedStateStore<?, K, ValueAndTimestamp<V>> typed = (WrappedStateStore<?, K, ValueAndTimestamp<V>>) wrapped;
        return typed.setFlushListener(listener, false);
    }
}
