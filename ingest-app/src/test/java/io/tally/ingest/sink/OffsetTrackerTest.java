package io.tally.ingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class OffsetTrackerTest {
    private final TopicPartition p0 = new TopicPartition("t", 0);
    private final TopicPartition p1 = new TopicPartition("t", 1);

    private static OffsetTracker.Segment segment(TopicPartition tp, long next, int writes) {
        OffsetTracker.Segment s = new OffsetTracker.Segment(tp, next);
        for (int i = 0; i < writes; i++) s.add();
        return s;
    }

    @Test
    void commitsOnlyTheContiguousDurablePrefixOfEachPartition() {
        OffsetTracker t = new OffsetTracker();
        OffsetTracker.Segment a = segment(p0, 10, 2);
        OffsetTracker.Segment b = segment(p0, 20, 1);
        OffsetTracker.Segment c = segment(p1, 5, 1);
        t.register(List.of(a, c));
        t.register(List.of(b));

        b.complete(); // later segment first: nothing of p0 may be committed yet
        c.complete();
        assertThat(t.committable()).isEqualTo(Map.of(p1, new OffsetAndMetadata(5)));

        a.complete();
        assertThat(t.committable()).isEmpty(); // a still has one write outstanding
        a.complete();
        assertThat(t.committable()).isEqualTo(Map.of(p0, new OffsetAndMetadata(20)));
        assertThat(t.committable()).isEmpty();
        assertThat(t.pendingSegments()).isZero();
    }

    @Test
    void aFailedCommitIsOfferedAgainAndForgottenPartitionsVanish() {
        OffsetTracker t = new OffsetTracker();
        OffsetTracker.Segment a = segment(p0, 10, 1);
        t.register(List.of(a));
        a.complete();
        Map<TopicPartition, OffsetAndMetadata> first = t.committable();
        t.commitFailed(first);
        assertThat(t.committable()).isEqualTo(first);

        t.register(List.of(segment(p1, 3, 0)));
        t.forget(List.of(p1));
        assertThat(t.committable()).isEmpty();
    }
}
