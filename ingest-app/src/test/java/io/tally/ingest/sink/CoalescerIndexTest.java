package io.tally.ingest.sink;

import static io.tally.ingest.sink.SinkFixtures.doc;
import static io.tally.ingest.sink.SinkFixtures.record;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.topology.EntityBucketSerde;
import io.tally.model.EntityBucketJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/**
 * A close walks every waiting bucket only when a held one may be due; the others look at the fresh buckets and at the
 * held ones the last walk found due. Random streams of fresh and late updates, pauses, drops and caps check that this
 * writes what walking every bucket at every close writes, and that no offset becomes committable before the updates it
 * read are durable.
 */
class CoalescerIndexTest {
    private static final long MS = 1_000_000L;
    private static final long CLOCK = 1_764_000_000_000L;
    /** The sink's holds while a backlog drains: flush 400 ms, keeping up within 2 s, bound 15 s, catch-up 60 s, quiet 8 s. */
    private static final Coalescer.Holds HOLDS = new Coalescer.Holds(Duration.ofMillis(400), Duration.ofSeconds(2), Duration.ofSeconds(15),
            Duration.ofSeconds(60), Duration.ofSeconds(8));
    /** How far behind an update is: mostly keeping up, some a little late, some a backfill's history. */
    private static final long[] BEHIND_MS = {20, 300, 1_500, 2_500, 6_000, 30_000, 600_000, 3_600_000};

    /** A random stream on a fake clock: each step reads a few updates, or lets time pass, or closes. */
    private static final class Stream {
        final Random random;
        final int partitions = 3;
        final Map<String, Long> vers = new HashMap<>();
        final long[] offsets = new long[partitions];
        long nanos = 1_000 * MS;
        long millis = CLOCK;
        /** Late-only stretches: the whole stream behind, so the catch-up and quiet rules come into play. */
        boolean lateOnly;

        Stream(long seed) {
            random = new Random(seed);
        }

        ConsumerRecord<String, byte[]> next() {
            int p = random.nextInt(partitions);
            String key = "e" + p + "-" + random.nextInt(25); // a bucket lives in one partition, as the key decides in Kafka
            long ver = vers.merge(key, 1L + random.nextInt(3), Long::sum);
            long behind = BEHIND_MS[lateOnly ? 4 + random.nextInt(4) : random.nextInt(BEHIND_MS.length)];
            ConsumerRecord<String, byte[]> r = record("t", p, offsets[p]++, doc(key, "d", ver));
            ConsumerRecord<String, byte[]> stamped = new ConsumerRecord<>(r.topic(), r.partition(), r.offset(), millis - behind,
                    TimestampType.CREATE_TIME, 0, 0, r.key(), r.value(), r.headers(), java.util.Optional.empty());
            if (random.nextInt(10) == 0) stamped.headers().add(EntityBucketSerde.CREATED_HEADER, new byte[] {1});
            return stamped;
        }

        void pass(long ms) {
            nanos += ms * MS;
            millis += ms;
        }
    }

    private static String describe(BucketWrite w) {
        return w.key + "@" + w.offset + (w.behind ? " behind" : "") + " " + w.kind() + " x" + w.coalesced() + " seg "
                + w.segment.partition + ":" + w.segment.nextOffset;
    }

    private static List<String> describe(Coalescer.Window window) {
        List<String> out = new ArrayList<>();
        window.writes().forEach(w -> out.add(describe(w)));
        out.sort(null); // the order among fresh writes, and among behind ones, is not part of the contract
        window.segments().forEach(s -> out.add("segment " + s.partition + ":" + s.nextOffset));
        out.add("records " + window.records());
        return out;
    }

    @Test
    void closesThatWalkNothingHeldWriteWhatWalkingEveryBucketWrites() {
        int walks = 0, closes = 0;
        for (long seed = 1; seed <= 150; seed++) {
            Stream s = new Stream(seed);
            Coalescer indexed = new Coalescer(EntityBucketJson::parts, HOLDS);
            Coalescer walking = Coalescer.walkingEveryClose(EntityBucketJson::parts, HOLDS);
            for (int step = 0; step < 400; step++) {
                int what = s.random.nextInt(100);
                if (what < 3) s.lateOnly = !s.lateOnly;
                if (what < 50) {
                    for (int i = s.random.nextInt(4); i >= 0; i--) {
                        ConsumerRecord<String, byte[]> r = s.next();
                        indexed.add(r, s.nanos, s.millis);
                        walking.add(r, s.nanos, s.millis);
                    }
                } else if (what < 80) {
                    s.pass(what < 78 ? s.random.nextInt(150) : 2_000 + s.random.nextInt(20_000)); // now and then a pause past quiet
                } else if (what < 81) {
                    List<TopicPartition> lost = List.of(new TopicPartition("t", s.random.nextInt(s.partitions)));
                    indexed.drop(lost);
                    walking.drop(lost);
                } else {
                    assertThat(indexed.dueAtNanos()).as("seed %d step %d: a close is never due later than a walk's", seed, step)
                            .isLessThanOrEqualTo(walking.dueAtNanos());
                    int keep = what < 84 ? 5 + s.random.nextInt(20) : Integer.MAX_VALUE; // now and then at the cap
                    int before = indexed.walks();
                    Coalescer.Window a = indexed.drain(s.nanos, keep, Long.MAX_VALUE, Integer.MAX_VALUE);
                    Coalescer.Window b = walking.drain(s.nanos, keep, Long.MAX_VALUE, Integer.MAX_VALUE);
                    assertThat(describe(a)).as("seed %d step %d", seed, step).isEqualTo(describe(b));
                    assertThat(indexed.documents()).isEqualTo(walking.documents());
                    walks += indexed.walks() - before;
                    closes++;
                }
            }
            assertThat(describe(indexed.drain())).as("seed %d, the end", seed).isEqualTo(describe(walking.drain()));
        }
        assertThat(walks).as("closes that walked, of %d", closes).isBetween(closes / 20, closes * 3 / 4);
    }

    @Test
    void withLittleRoomForHeldWritesNoOffsetIsCommittableBeforeTheUpdatesItReadAreDurable() {
        for (long seed = 1; seed <= 100; seed++) {
            Stream s = new Stream(seed);
            Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
            OffsetTracker tracker = new OffsetTracker();
            Map<String, Long> durable = new HashMap<>();              // key -> newest ver durable
            Map<TopicPartition, List<long[]>> read = new HashMap<>();  // per partition: {offset, key's ver} in offset order
            Map<TopicPartition, List<String>> keys = new HashMap<>();
            List<BucketWrite> inFlight = new ArrayList<>();
            Map<String, Long> newest = new HashMap<>();                 // key -> newest ver read
            for (int step = 0; step < 400; step++) {
                int what = s.random.nextInt(100);
                if (what < 3) s.lateOnly = !s.lateOnly;
                if (what < 50) {
                    ConsumerRecord<String, byte[]> r = s.next();
                    c.add(r, s.nanos, s.millis);
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    read.computeIfAbsent(tp, k -> new ArrayList<>()).add(new long[] {r.offset(), EntityBucketJson.header(r.value()).ver()});
                    keys.computeIfAbsent(tp, k -> new ArrayList<>()).add(r.key());
                    newest.merge(r.key(), EntityBucketJson.header(r.value()).ver(), Math::max);
                } else if (what < 80) {
                    s.pass(what < 78 ? s.random.nextInt(150) : 2_000 + s.random.nextInt(20_000));
                } else {
                    int room = s.random.nextInt(3);
                    Coalescer.Window w = c.drain(s.nanos, Integer.MAX_VALUE, Long.MAX_VALUE, room);
                    assertThat(w.writes().stream().filter(b -> b.behind).count()).as("seed %d: held writes past the room", seed).isLessThanOrEqualTo(room);
                    tracker.register(w.segments());
                    w.writes().forEach(c::decode);
                    inFlight.addAll(w.writes());
                }
                // writes become durable a while after they were handed over, not in order
                for (int i = inFlight.size() - 1; i >= 0; i--) {
                    if (s.random.nextInt(4) != 0) continue;
                    BucketWrite done = inFlight.remove(i);
                    durable.merge(done.key, done.ver(), Math::max);
                    done.segment.complete();
                }
                for (var committable : tracker.committable().entrySet()) {
                    TopicPartition tp = committable.getKey();
                    long to = committable.getValue().offset();
                    List<long[]> offsets = read.get(tp);
                    for (int i = 0; i < offsets.size() && offsets.get(i)[0] < to; i++) {
                        String key = keys.get(tp).get(i);
                        assertThat(durable.getOrDefault(key, 0L)).as("seed %d: %s committable to %d, %s read at %d", seed, tp, to,
                                key, offsets.get(i)[0]).isGreaterThanOrEqualTo(offsets.get(i)[1]);
                    }
                }
            }
            Coalescer.Window last = c.drain();
            tracker.register(last.segments());
            last.writes().forEach(c::decode);
            inFlight.addAll(last.writes());
            inFlight.forEach(b -> {
                durable.merge(b.key, b.ver(), Math::max);
                b.segment.complete();
            });
            tracker.committable();
            assertThat(durable).as("seed %d: every bucket's newest version written", seed).isEqualTo(newest);
        }
    }
}
