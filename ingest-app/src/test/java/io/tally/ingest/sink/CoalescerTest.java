package io.tally.ingest.sink;

import static io.tally.ingest.sink.SinkFixtures.doc;
import static io.tally.ingest.sink.SinkFixtures.record;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.topology.EntityBucketSerde;
import io.tally.model.EntityBucketJson;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class CoalescerTest {

    @Test
    void keepsTheNewestVersionPerBucketAndOneSegmentPerPartition() {
        Coalescer c = new Coalescer(EntityBucketJson::parts);
        c.add(record("t", 0, 10, doc("a", "x", 1)));
        c.add(record("t", 0, 11, doc("a", "x", 3)));
        c.add(record("t", 0, 12, doc("a", "x", 2))); // older ver arriving later (a replay): loses
        c.add(record("t", 1, 5, doc("b", "y", 7)));
        assertThat(c.records()).isEqualTo(4);
        assertThat(c.documents()).isEqualTo(2);

        Coalescer.Window w = c.drain();
        w.writes().forEach(c::decode);
        assertThat(w.writes()).hasSize(2);
        BucketWrite x = w.writes().stream().filter(b -> b.doc.id().equals("x")).findFirst().orElseThrow();
        assertThat(x.ver()).isEqualTo(3);
        assertThat(x.coalesced()).isEqualTo(3);
        assertThat(w.segments()).extracting(s -> s.partition + "@" + s.nextOffset).containsExactlyInAnyOrder("t-0@13", "t-1@6");
        assertThat(c.isEmpty()).isTrue();
    }

    @Test
    void aBucketsFirstUpdateIsWrittenAsACreateAndLaterOnesAsConditionalPatches() {
        Coalescer c = new Coalescer(EntityBucketJson::parts);
        ConsumerRecord<String, byte[]> first = record("t", 0, 1, doc("a", "x", 2));
        first.headers().add(EntityBucketSerde.CREATED_HEADER, new byte[] {1});
        c.add(first);
        c.add(record("t", 0, 2, doc("a", "x", 5))); // coalesced into the same window: still not in Cosmos
        c.add(record("t", 0, 3, doc("a", "y", 4)));
        Coalescer.Window w = c.drain();
        w.writes().forEach(c::decode);
        assertThat(w.writes()).extracting(b -> b.doc.id() + ":" + b.kind() + ":" + b.ver())
                .containsExactly("x:CREATE:5", "y:PATCH_IF_NEWER:4");
    }

    @Test
    void anUndecodableRecordBecomesAPoisonWrite() {
        Coalescer c = new Coalescer(EntityBucketJson::parts);
        c.add(new ConsumerRecord<>("t", 0, 0, "k", "{nope".getBytes(StandardCharsets.UTF_8)));
        c.add(record("t", 0, 1, doc("a", "x", 1)));
        Coalescer.Window w = c.drain();
        assertThat(w.writes()).hasSize(2);
        assertThat(w.writes()).filteredOn(b -> b.poison != null).singleElement()
                .satisfies(b -> assertThat(b.poison).as("the decoder's message").contains("Unexpected character"));
    }

    @Test
    void onlyTheUpdateThatWinsIsDecodedAndOneThatCannotBeIsPoisonWhenItIsDecoded() {
        List<String> decoded = new java.util.ArrayList<>();
        Coalescer c = new Coalescer(bytes -> {
            decoded.add(new String(bytes, StandardCharsets.UTF_8));
            return EntityBucketJson.parts(bytes);
        });
        for (int ver = 1; ver <= 50; ver++) c.add(record("t", 0, ver, doc("a", "x", ver)));
        String badGrades = "{\"pk\":\"d|b\",\"id\":\"y\",\"ver\":3,\"grades\":{\"g\":[\"many\"]}}";
        c.add(new ConsumerRecord<>("t", 0, 51, "d|b|y", badGrades.getBytes(StandardCharsets.UTF_8)));
        assertThat(decoded).as("nothing is decoded while the window is open").isEmpty();
        assertThat(c.documents()).isEqualTo(2);

        Coalescer.Window w = c.drain();
        assertThat(decoded).as("a closed window waits as bytes too").isEmpty();
        w.writes().forEach(c::decode);
        w.writes().forEach(c::decode);
        assertThat(decoded).as("one decode per bucket, of its newest update, once").hasSize(2);
        assertThat(w.writes()).filteredOn(b -> b.poison == null).singleElement()
                .satisfies(b -> assertThat(b.ver()).isEqualTo(50)).satisfies(b -> assertThat(b.coalesced()).isEqualTo(50));
        assertThat(w.writes()).filteredOn(b -> b.poison != null).singleElement()
                .satisfies(b -> assertThat(b.poison).isEqualTo("grade g: count is not a whole number"))
                .satisfies(b -> assertThat(b.offset).isEqualTo(51));
    }

    @Test
    void aWindowKnowsHowFarBehindItsFreshestUpdateWasWhenRead() {
        Coalescer c = new Coalescer(EntityBucketJson::parts);
        assertThat(c.behindMillis()).isEqualTo(Long.MAX_VALUE);
        long now = System.currentTimeMillis();
        c.add(timestamped(record("t", 0, 1, doc("a", "x", 1)), now - 60_000));
        c.add(timestamped(record("t", 0, 2, doc("a", "y", 1)), now - 20_000));
        assertThat(c.behindMillis()).isBetween(20_000L, 21_000L);
        c.drain();
        assertThat(c.behindMillis()).as("a new window starts afresh").isEqualTo(Long.MAX_VALUE);
    }

    private static ConsumerRecord<String, byte[]> timestamped(ConsumerRecord<String, byte[]> r, long timestamp) {
        return new ConsumerRecord<>(r.topic(), r.partition(), r.offset(), timestamp, org.apache.kafka.common.record.TimestampType.CREATE_TIME,
                0, 0, r.key(), r.value(), r.headers(), java.util.Optional.empty());
    }

    @Test
    void droppingARevokedPartitionForgetsItsUnsentUpdates() {
        Coalescer c = new Coalescer(EntityBucketJson::parts);
        c.add(record("t", 0, 1, doc("a", "x", 1)));
        c.add(record("t", 1, 1, doc("b", "y", 1)));
        c.drop(List.of(new TopicPartition("t", 0)));
        Coalescer.Window w = c.drain();
        assertThat(w.writes()).extracting(b -> b.partition.partition()).containsExactly(1);
        assertThat(w.segments()).hasSize(1);
    }

    // Flush window 400 ms, keeping up within 2 s; further behind, as long as it is behind beyond that, up to 15 s.
    private static final Coalescer.Holds HOLDS = new Coalescer.Holds(Duration.ofMillis(400), Duration.ofSeconds(2), Duration.ofSeconds(15));
    /** The sink's holds while a backlog drains: a 60 s catch-up window and 8 s of quiet before the end. */
    private static final Coalescer.Holds DRAINING = new Coalescer.Holds(Duration.ofMillis(400), Duration.ofSeconds(2), Duration.ofSeconds(15),
            Duration.ofSeconds(60), Duration.ofSeconds(8));
    private static final long MS = 1_000_000L;

    /** The document id of a write (its key is pk|id). */
    private static String id(BucketWrite w) {
        return w.key.substring(w.key.lastIndexOf('|') + 1);
    }

    /** The wall clock of these tests: records are stamped against it, and the coalescer is told it. */
    private static final long CLOCK = 1_764_000_000_000L;

    private static ConsumerRecord<String, byte[]> behind(String topic, int partition, long offset, io.tally.model.EntityBucket value, long behindMs) {
        return timestamped(record(topic, partition, offset, value), CLOCK - behindMs);
    }

    @Test
    void aBucketBehindWaitsPastACloseWhileAFreshOneIsWrittenAndFreshWritesGoFirst() {
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        long t0 = 0;
        c.add(behind("t", 0, 1, doc("a", "history", 1), 7_000), t0, CLOCK);      // 7 s behind: waits 5 s
        c.add(behind("t", 0, 2, doc("a", "old-news", 1), 60_000), t0, CLOCK);     // a minute behind: waits the bound, 15 s
        c.add(behind("t", 0, 3, doc("b", "live", 1), 50), t0, CLOCK);             // keeping up: at once
        assertThat(c.dueAtNanos()).isEqualTo(t0);

        Coalescer.Window first = c.drain(t0, Integer.MAX_VALUE);
        assertThat(first.writes()).extracting(CoalescerTest::id).containsExactly("live");
        assertThat(c.documents()).isEqualTo(2);
        assertThat(c.dueAtNanos()).as("the waiting buckets' hold").isEqualTo(t0 + 5_000 * MS);

        c.add(behind("t", 0, 4, doc("a", "history", 2), 11_000), t0 + 4_000 * MS, CLOCK); // coalesces while it waits
        c.add(behind("t", 0, 5, doc("c", "live", 1), 50), t0 + 4_900 * MS, CLOCK);
        Coalescer.Window second = c.drain(t0 + 5_000 * MS, Integer.MAX_VALUE);
        second.writes().forEach(c::decode);
        assertThat(second.writes()).as("fresh first, then what waited its hold")
                .extracting(w -> id(w) + "@" + w.ver() + "x" + w.coalesced())
                .containsExactly("live@1x1", "history@2x2");
        assertThat(c.dueAtNanos()).isEqualTo(t0 + 15_000 * MS);
        assertThat(c.drain(t0 + 15_000 * MS, Integer.MAX_VALUE).writes()).extracting(CoalescerTest::id).containsExactly("old-news");
        assertThat(c.isEmpty()).isTrue();
    }

    @Test
    void freshNewsInAWaitingBucketIsWrittenAtOnce() {
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        c.add(behind("t", 0, 1, doc("a", "x", 1), 600_000), 0, CLOCK);  // far behind: waits 15 s
        assertThat(c.drain(400 * MS, Integer.MAX_VALUE).writes()).isEmpty();
        c.add(behind("t", 0, 2, doc("a", "x", 2), 10), 500 * MS, CLOCK); // live changes the same document
        assertThat(c.dueAtNanos()).isEqualTo(500 * MS);
        Coalescer.Window w = c.drain(500 * MS, Integer.MAX_VALUE);
        w.writes().forEach(c::decode);
        assertThat(w.writes()).extracting(b -> id(b) + "@" + b.ver()).containsExactly("x@2");
    }

    @Test
    void besideUpdatesThatKeepUpOnlyAsManyBehindWritesGoAsTheSinkHasRoomForAndTheRestStayDue() {
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        for (int i = 1; i <= 3; i++) c.add(behind("t", 0, i, doc("h", "history-" + i, 1), 7_000), 0, CLOCK); // waits 5 s
        assertThat(c.keepingUp(0)).isFalse();
        c.add(behind("t", 0, 4, doc("a", "live", 1), 10), 4_900 * MS, CLOCK);
        assertThat(c.keepingUp(4_900 * MS)).isTrue();
        Coalescer.Window w = c.drain(5_000 * MS, Integer.MAX_VALUE, Long.MAX_VALUE, 2);
        assertThat(w.writes()).extracting(b -> id(b) + "/" + b.behind).containsExactly("live/false", "history-1/true", "history-2/true");
        assertThat(c.dueAtNanos()).as("still due: looked at again at the next close").isEqualTo(5_050 * MS);
        assertThat(c.drain(5_050 * MS, Integer.MAX_VALUE, Long.MAX_VALUE, 0).writes()).isEmpty();
        assertThat(c.drain(5_100 * MS, Integer.MAX_VALUE, Long.MAX_VALUE, 1).writes()).extracting(CoalescerTest::id).containsExactly("history-3");
        assertThat(c.isEmpty()).isTrue();
    }

    @Test
    void closesComeAtMostEveryEighthOfAFlushWindowSoAStage5CommitIsOneClose() {
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        c.add(behind("t", 0, 1, doc("a", "one", 1), 10), 0, CLOCK);
        assertThat(c.drain(0, Integer.MAX_VALUE).writes()).hasSize(1);
        c.add(behind("t", 0, 2, doc("b", "two", 1), 10), 10 * MS, CLOCK);
        c.add(behind("t", 0, 3, doc("c", "three", 1), 10), 30 * MS, CLOCK);
        assertThat(c.dueAtNanos()).isEqualTo(50 * MS);
        assertThat(c.drain(50 * MS, Integer.MAX_VALUE).writes()).extracting(CoalescerTest::id).containsExactly("two", "three");
        assertThat(c.dueAtNanos()).as("nothing waits").isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aFreshBucketIsWrittenAtOnceUnlessItWasWrittenWithinTheFlushWindowThenAWindowAfterThatWrite() {
        OffsetTracker tracker = new OffsetTracker();
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        c.add(behind("t", 0, 1, doc("a", "hot", 1), 10), 0, CLOCK);
        assertThat(c.dueAtNanos()).as("not written lately: at once").isEqualTo(0);
        Coalescer.Window first = c.drain(0, Integer.MAX_VALUE);
        tracker.register(first.segments());
        assertThat(first.writes()).extracting(CoalescerTest::id).containsExactly("hot");
        first.writes().forEach(w -> w.segment.complete());

        c.add(behind("t", 0, 2, doc("a", "hot", 2), 10), 100 * MS, CLOCK);
        c.add(behind("t", 0, 3, doc("b", "cold", 1), 10), 100 * MS, CLOCK);
        assertThat(c.dueAtNanos()).isEqualTo(100 * MS);
        Coalescer.Window second = c.drain(100 * MS, Integer.MAX_VALUE);
        tracker.register(second.segments());
        assertThat(second.writes()).as("hot was written 100 ms ago: it waits").extracting(CoalescerTest::id).containsExactly("cold");
        second.writes().forEach(w -> w.segment.complete());
        assertThat(tracker.committable()).as("offset 2 waits in the coalescer: only the first close is durable")
                .containsExactly(java.util.Map.entry(new TopicPartition("t", 0), new org.apache.kafka.clients.consumer.OffsetAndMetadata(2)));
        assertThat(c.dueAtNanos()).as("a flush window after its last write").isEqualTo(400 * MS);

        c.add(behind("t", 0, 4, doc("a", "hot", 3), 10), 300 * MS, CLOCK);
        Coalescer.Window early = c.drain(399 * MS, Integer.MAX_VALUE);
        tracker.register(early.segments());
        assertThat(early.writes()).isEmpty();
        Coalescer.Window third = c.drain(400 * MS, Integer.MAX_VALUE);
        tracker.register(third.segments());
        third.writes().forEach(c::decode);
        assertThat(third.writes()).as("once in the window, with what came meanwhile")
                .extracting(w -> id(w) + "@" + w.ver() + "x" + w.coalesced()).containsExactly("hot@3x2");
        third.writes().forEach(w -> w.segment.complete());
        assertThat(tracker.committable()).containsExactly(java.util.Map.entry(new TopicPartition("t", 0),
                new org.apache.kafka.clients.consumer.OffsetAndMetadata(5)));

        c.add(behind("t", 0, 5, doc("a", "hot", 4), 10), 800 * MS, CLOCK);
        assertThat(c.dueAtNanos()).as("its last write a window ago: at once again").isEqualTo(800 * MS);
    }

    @Test
    void noOffsetIsCommittableBeforeTheWriteOfABucketThatWaitedPastItsClose() {
        OffsetTracker tracker = new OffsetTracker();
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        TopicPartition tp = new TopicPartition("t", 0);
        c.add(behind("t", 0, 10, doc("a", "waits", 1), 7_000), 0, CLOCK);
        c.add(behind("t", 0, 11, doc("a", "live", 1), 0), 0, CLOCK);
        Coalescer.Window first = c.drain(400 * MS, Integer.MAX_VALUE);
        tracker.register(first.segments());
        first.writes().forEach(w -> w.segment.complete());
        assertThat(tracker.committable()).as("offset 10 waits in the coalescer").isEmpty();

        c.add(behind("t", 0, 12, doc("a", "live", 2), 0), 500 * MS, CLOCK);
        Coalescer.Window second = c.drain(900 * MS, Integer.MAX_VALUE);
        tracker.register(second.segments());
        second.writes().forEach(w -> w.segment.complete());
        assertThat(tracker.committable()).as("later closes are durable, the first is not").isEmpty();

        Coalescer.Window third = c.drain(5_000 * MS, Integer.MAX_VALUE);
        tracker.register(third.segments());
        assertThat(third.writes()).extracting(CoalescerTest::id).containsExactly("waits");
        assertThat(tracker.committable()).isEmpty();
        third.writes().forEach(w -> w.segment.complete());
        assertThat(tracker.committable()).containsExactly(java.util.Map.entry(tp, new org.apache.kafka.clients.consumer.OffsetAndMetadata(13)));
    }

    @Test
    void pastItsCapTheLeastRecentlyUpdatedBucketsAreWrittenFirst() {
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        for (int i = 0; i < 6; i++) c.add(behind("t", 0, i, doc("a", "b" + i, 1), 600_000), i * MS, CLOCK);
        c.add(behind("t", 0, 6, doc("a", "b0", 2), 600_000), 10 * MS, CLOCK); // b0 is busy: the last to be written
        Coalescer.Window w = c.drain(400 * MS, 2);
        assertThat(w.writes()).extracting(CoalescerTest::id).containsExactlyInAnyOrder("b1", "b2", "b3", "b4");
        assertThat(c.documents()).isEqualTo(2);
        assertThat(c.drain().writes()).extracting(CoalescerTest::id).containsExactlyInAnyOrder("b0", "b5");
    }

    @Test
    void droppingARevokedPartitionForgetsTheBucketsWaitingPastAClose() {
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        c.add(behind("t", 0, 1, doc("a", "x", 1), 600_000), 0, CLOCK);
        c.add(behind("t", 1, 1, doc("b", "y", 1), 600_000), 0, CLOCK);
        c.drain(400 * MS, Integer.MAX_VALUE);
        c.drop(List.of(new TopicPartition("t", 0)));
        assertThat(c.documents()).isEqualTo(1);
        assertThat(c.drain().writes()).extracting(CoalescerTest::id).containsExactly("y");
        assertThat(c.isEmpty()).isTrue();
    }

    @Test
    void whileEvenTheFreshestUpdateIsLateALateBucketWaitsTheBoundThenGoesAtItsOwnHoldOnceTheStreamIsFresh() {
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        c.add(behind("t", 0, 1, doc("a", "month", 1), 10_000), 0, CLOCK);           // its own hold: 8 s
        c.add(behind("t", 0, 2, doc("a", "month", 2), 9_000), 8_500 * MS, CLOCK);    // the burst goes on
        assertThat(c.drain(9_000 * MS, Integer.MAX_VALUE).writes()).as("the whole stream is behind: more is coming").isEmpty();
        assertThat(c.dueAtNanos()).as("looked at again when the stream may have gone quiet").isEqualTo(11_000 * MS);

        c.add(behind("t", 0, 3, doc("b", "live", 1), 100), 10_000 * MS, CLOCK);      // caught up
        Coalescer.Window w = c.drain(10_400 * MS, Integer.MAX_VALUE);
        w.writes().forEach(c::decode);
        assertThat(w.writes()).extracting(b -> id(b) + "@" + b.ver()).containsExactly("live@1", "month@2");
    }

    @Test
    void whenTheStreamGoesQuietWhatWaitsGoesAtItsOwnHoldNotTheBound() {
        // The last of a backlog, or what a rebalance read again: late, and nothing after it.
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        c.add(behind("t", 0, 1, doc("a", "x", 1), 5_000), 0, CLOCK);                 // its own hold: 3 s
        assertThat(c.drain(400 * MS, Integer.MAX_VALUE).writes()).isEmpty();
        assertThat(c.dueAtNanos()).isEqualTo(3_000 * MS);
        assertThat(c.drain(3_000 * MS, Integer.MAX_VALUE).writes()).as("quiet for 3 s: its own hold").extracting(CoalescerTest::id)
                .containsExactly("x");
    }

    @Test
    void whileTheWholeStreamIsBehindALateBucketWaitsTheCatchUpWindowAndBesideFreshUpdatesOnlyItsBound() {
        // Bound 15 s, catch-up 60 s: a drain nobody waits on writes a busy document once a minute; a backfill's
        // buckets beside live updates are written within the bound.
        Coalescer.Holds holds = new Coalescer.Holds(Duration.ofMillis(400), Duration.ofSeconds(2), Duration.ofSeconds(15), Duration.ofSeconds(60));
        Coalescer c = new Coalescer(EntityBucketJson::parts, holds);
        for (long t = 0; t <= 40_000; t += 1_000) c.add(behind("t", 0, t, doc("a", "month", t + 1), 600_000), t * MS, CLOCK);
        assertThat(c.drain(40_400 * MS, Integer.MAX_VALUE).writes()).as("past the bound, the drain goes on: it waits").isEmpty();
        for (long t = 41_000; t <= 60_000; t += 1_000) c.add(behind("t", 0, t, doc("a", "month", t + 1), 600_000), t * MS, CLOCK);
        Coalescer.Window w = c.drain(60_000 * MS, Integer.MAX_VALUE);
        w.writes().forEach(c::decode);
        assertThat(w.writes()).as("once per catch-up window, the newest").extracting(b -> id(b) + "@" + b.ver() + "x" + b.coalesced())
                .containsExactly("month@60001x61");

        Coalescer beside = new Coalescer(EntityBucketJson::parts, holds);
        for (long t = 0; t <= 15_000; t += 1_000) {
            beside.add(behind("t", 0, 2 * t, doc("a", "backfilled", t + 1), 600_000), t * MS, CLOCK);
            beside.add(behind("t", 0, 2 * t + 1, doc("b", "live", t + 1), 50), t * MS, CLOCK);
        }
        assertThat(beside.drain(15_000 * MS, Integer.MAX_VALUE).writes()).as("live updates flow: the bound, not the catch-up window")
                .extracting(CoalescerTest::id).containsExactly("live", "backfilled");
    }

    @Test
    void theAggregationsPausesBetweenBacklogCommitsAreNotTheEndOfTheStream() {
        // Updates come in bursts 4.5 s apart (a 3 s commit interval, then the commit), behind all of them: with the pause
        // counted in the quiet time (8 s), the drain keeps waiting, from its first pause on.
        Coalescer waits = new Coalescer(EntityBucketJson::parts, DRAINING);
        int written = 0;
        for (long t = 0; t <= 40_500; t += 4_500) {
            waits.add(behind("t", 0, t, doc("a", "month", t + 1), 600_000), t * MS, CLOCK);
            for (long at = t + 400; at < t + 4_500; at += 400) written += waits.drain(at * MS, Integer.MAX_VALUE).writes().size();
        }
        assertThat(written).as("40 s of a drain: the busy document waits for the catch-up window").isZero();
        assertThat(waits.drain(49_000 * MS, Integer.MAX_VALUE).writes()).as("quiet for 8.5 s: under twice its pauses (9 s)").isEmpty();
        assertThat(waits.drain(49_800 * MS, Integer.MAX_VALUE).writes()).as("quiet for twice its pauses: the end, written")
                .extracting(CoalescerTest::id).containsExactly("month");
    }

    @Test
    void theQuietTimeGrowsWithThePausesADrainHasShownSoCommitsThatComeLaterStillAreNotTheEnd() {
        // A loaded machine: the aggregation's commits come further apart as the drain goes on (4.5 s, then 1.5 s more each
        // time, past the 8 s quiet time). The pauses seen are the drain's pace; the end is a pause well past them.
        Coalescer c = new Coalescer(EntityBucketJson::parts, DRAINING);
        int written = 0;
        long t = 0, last = 0;
        for (long gap = 4_500; gap <= 12_000; gap += 1_500) {
            c.add(behind("t", 0, t, doc("a", "month", t + 1), 600_000), t * MS, CLOCK);
            last = t;
            for (long at = t + 400; at < t + gap; at += 400) written += c.drain(at * MS, Integer.MAX_VALUE).writes().size();
            t += gap;
        }
        assertThat(written).as("pauses of 9, 10.5 and 12 s in a drain that paused 7.5 s before: not the end").isZero();
        assertThat(c.drain((last + 20_600) * MS, Integer.MAX_VALUE).writes()).as("quiet for 20.6 s: under twice the longest pause between reads (10.5 s)")
                .isEmpty();
        assertThat(c.drain((last + 21_200) * MS, Integer.MAX_VALUE).writes()).as("quiet for twice the longest pause: the end, written")
                .extracting(CoalescerTest::id).containsExactly("month");
    }

    @Test
    void pastItsHeapBoundTheLeastRecentlyUpdatedBucketsAreWrittenUntilHalfOfItWaits() {
        Coalescer c = new Coalescer(EntityBucketJson::parts, HOLDS);
        long one = 0;
        for (int i = 0; i < 6; i++) {
            var r = behind("t", 0, i, doc("a", "b" + i, 1), 600_000);
            one = Coalescer.ENTRY_BYTES + r.value().length;
            c.add(r, i * MS, CLOCK);
        }
        assertThat(c.bytes()).as("six documents of the same size").isEqualTo(6 * one);
        Coalescer.Window w = c.drain(400 * MS, Integer.MAX_VALUE, 3 * one);
        assertThat(w.writes()).extracting(CoalescerTest::id).containsExactly("b0", "b1", "b2");
        assertThat(c.bytes()).isEqualTo(3 * one);
        c.drain();
        assertThat(c.bytes()).as("nothing waits, nothing is held").isZero();
    }
}
