package io.tally.ingest.replay;

import io.tally.ingest.topology.BucketStarts;
import io.tally.schemas.DeadLetters;
import io.tally.ingest.topology.DedupeRule;
import io.tally.ingest.topology.EntityBucketMath;
import io.tally.ingest.topology.EntityDeltas;
import io.tally.ingest.topology.EventIntake;
import io.tally.ingest.topology.FanOut;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.TimeUnit;
import io.tally.rules.source.SourceEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Stages 1-5 of the live topology, in one process, over the records of a range: the same
 * {@link EventIntake}, {@link DedupeRule}, {@link FanOut} and {@link EntityBucketMath}, judged against the same Kafka
 * record timestamps, so each entity bucket document gets the values and the {@code ver} (number of deltas) the live
 * run gave it. Only buckets wholly inside the range are kept. Every rule is applied, whatever the selection: a
 * document holds every grade of its entity bucket and is written whole, so it must be rebuilt whole.
 *
 * <p>Dedupe follows stage 2 ({@link DedupeRule}): per input partition, a transaction id (within its source) seen within
 * the dedupe horizon (by record timestamp) counts once. Only ids of events inside the range are remembered: a duplicate
 * carries its original's event time, so a duplicate of an event outside the range is outside too.
 *
 * <p>Memory: one map entry per bucket computed (about 0.7 KB: key, document, decimals) plus one per
 * transaction id in the range (about 110 bytes), measured in docs/replay.md. A range of 10 million events
 * over 2 million buckets needs about 2.5 GB of heap; split larger ranges into several runs.
 *
 * <p>Not thread-safe: one reading thread feeds it.
 */
final class ReplayAggregator {
    private final EventIntake intake;
    private final FanOut fanOut;
    private final RuleSelection rules;
    private final ReplayRange range;
    private final DedupeRule dedupe;
    private final BucketStarts starts = new BucketStarts();
    private final Map<Integer, Map<String, Long>> seenByPartition = new HashMap<>();
    private final Map<String, EntityBucket> buckets = new LinkedHashMap<>();
    private final EntityBucketMath.Documents documents;
    private final Set<String> straddling = new HashSet<>();
    private final Map<DeadLetters.Reason, Long> rejected = new EnumMap<>(DeadLetters.Reason.class);
    private long read;
    private long accepted;
    private long duplicates;
    private long outsideRange;

    /**
     * @param verFloor the least {@code ver} of a document under the rules generation replayed
     *                 (io.tally.rules.state.RulesState#verFloor): every document starts there, as live ones do
     */
    ReplayAggregator(EventIntake intake, FanOut fanOut, RuleSelection rules, ReplayRange range, Duration dedupeHorizon, long verFloor) {
        this.documents = new EntityBucketMath.Documents() {
            @Override
            public EntityBucket changing(String key, java.util.function.Supplier<EntityBucket> create) {
                return buckets.computeIfAbsent(key, k -> {
                    EntityBucket doc = create.get();
                    if (verFloor > 0) doc.restart(verFloor, null);
                    return doc;
                });
            }

            @Override
            public EntityBucket peek(String key) {
                return buckets.get(key);
            }
        };
        this.intake = intake;
        this.fanOut = fanOut;
        this.rules = rules;
        this.range = range;
        this.dedupe = new DedupeRule(dedupeHorizon);
    }

    /**
     * Takes one record of the input topic. A decoding failure that is not the record's fault (the
     * registry is down) is thrown: counting the record as rejected would make the replay differ from live.
     */
    void accept(ConsumerRecord<byte[], byte[]> record) {
        read++;
        EventIntake.Outcome outcome = intake.judge(record.topic(), record.value(), record.timestamp());
        if (!outcome.accepted()) {
            reject(outcome.reason());
            return;
        }
        SourceEvent event = outcome.event();
        accepted++;
        if (!range.contains(Instant.ofEpochMilli(event.eventTimeMs()))) {
            outsideRange++;
            return;
        }
        if (duplicate(record.partition(), event.dedupeKey(), record.timestamp())) {
            duplicates++;
            return;
        }
        for (EntityDeltas bundle : fanOut.deltas(event, record.timestamp())) {
            for (EntityDeltas.Delta d : bundle.deltas()) {
                TimeUnit unit = EntityBucketMath.documentUnit(d);
                long index = EntityBucketMath.documentIndex(d);
                if (!range.containsBucket(unit, index)) {
                    straddling.add(BucketKey.updateKey(bundle.pk(), EntityBucketId.main(unit, index)));
                    continue;
                }
                EntityBucketMath.apply(documents, bundle.pk(), d, starts, fanOut::ttlSeconds);
            }
        }
    }

    /**
     * Stage 2's rule: the first record of an id counts; another within the horizon of it does not. Kept per partition
     * number, as live: one stream task reads partition n of every source topic, and its store holds their ids.
     */
    private boolean duplicate(int partition, String dedupeKey, long timestamp) {
        Map<String, Long> seen = seenByPartition.computeIfAbsent(partition, p -> new HashMap<>());
        Long first = seen.get(dedupeKey);
        if (first != null && dedupe.isDuplicate(first, timestamp)) return true;
        seen.put(dedupeKey, timestamp);
        return false;
    }

    private void reject(DeadLetters.Reason reason) {
        rejected.merge(reason, 1L, Long::sum);
    }

    /**
     * The recomputed documents of the entity buckets that hold a grade of a selected rule (main documents and their
     * spill pages), {@code updatedAt} unset.
     */
    List<EntityBucket> buckets() {
        Map<String, Boolean> mainSelected = new HashMap<>();
        for (EntityBucket d : buckets.values()) {
            if (!d.isPage()) mainSelected.put(BucketKey.updateKey(d.pk(), d.id()), rules.selectsAny(d));
        }
        return buckets.values().stream().filter(d -> {
            if (!d.isPage()) return mainSelected.get(BucketKey.updateKey(d.pk(), d.id()));
            EntityBucketId id = EntityBucketId.parse(d.id());
            return mainSelected.getOrDefault(BucketKey.updateKey(d.pk(), EntityBucketId.main(id.unit(), id.bucketIndex())), false);
        }).toList();
    }

    long read() { return read; }

    long accepted() { return accepted; }

    long duplicates() { return duplicates; }

    long outsideRange() { return outsideRange; }

    /** Buckets the range's events touch that reach beyond the range: not written. */
    long skippedAtBounds() { return straddling.size(); }

    Map<DeadLetters.Reason, Long> rejected() { return Map.copyOf(rejected); }
}
