package io.tally.ingest.sink;

import static io.tally.ingest.sink.SinkFixtures.doc;
import static io.tally.ingest.sink.SinkFixtures.record;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.topology.EntityBucketSerde;
import io.tally.model.EntityBucketJson;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class CoalescerTest {

    @Test
    void keepsTheNewestVersionPerBucketAndOneSegmentPerPartition() {
        Coalescer c = new Coalescer(EntityBucketJson::read);
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
        Coalescer c = new Coalescer(EntityBucketJson::read);
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
        Coalescer c = new Coalescer(EntityBucketJson::read);
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
            return EntityBucketJson.read(bytes);
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
        Coalescer c = new Coalescer(EntityBucketJson::read);
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
        Coalescer c = new Coalescer(EntityBucketJson::read);
        c.add(record("t", 0, 1, doc("a", "x", 1)));
        c.add(record("t", 1, 1, doc("b", "y", 1)));
        c.drop(List.of(new TopicPartition("t", 0)));
        Coalescer.Window w = c.drain();
        assertThat(w.writes()).extracting(b -> b.partition.partition()).containsExactly(1);
        assertThat(w.segments()).hasSize(1);
    }
}
