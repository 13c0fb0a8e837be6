package io.tally.loadgen.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.loadgen.Destination;
import io.tally.loadgen.EventGenerator;
import io.tally.loadgen.LoadgenSettings;
import io.tally.loadgen.OutgoingRecord;
import io.tally.loadgen.RecordKind;
import io.tally.schemas.avro.TransactionEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.file.DataFileStream;
import org.apache.avro.specific.SpecificDatumReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplayRoundTripTest {
    @Test
    void aRecordedStreamReplaysTheSameEventsInOrder(@TempDir Path dir) throws Exception {
        LoadgenSettings s = LoadgenSettings.load(new String[] {"--loadgen.events=2000", "--loadgen.malformed.fraction=0.01",
                "--loadgen.duplicate.fraction=0.05", "--loadgen.late.fraction=0.01"}, Map.of(), Instant.parse("2026-11-21T00:00:00Z"));
        Path file = dir.resolve("run.avro");
        List<OutgoingRecord> expected = record(s, file, false);
        assertThat(ReplaySource.holdsOrders(file)).isFalse();
        try (DataFileStream<TransactionEvent> plain = new DataFileStream<>(Files.newInputStream(file),
                new SpecificDatumReader<>(TransactionEvent.class))) {
            assertThat(plain.getSchema()).as("without orders, a file of TransactionEvents as before").isEqualTo(TransactionEvent.getClassSchema());
        }
        List<OutgoingRecord> replayed = replay(file, 2.0);
        assertThat(replayed).extracting(OutgoingRecord::event).containsExactlyElementsOf(expected.stream().map(OutgoingRecord::event).toList());
        assertThat(replayed).extracting(OutgoingRecord::key).containsExactlyElementsOf(expected.stream().map(OutgoingRecord::key).toList());
        // Pacing: the event-time high-water mark's distance from the first event, halved (speed 2).
        long first = replayed.get(0).event().getEventTime().toEpochMilli();
        long high = first;
        for (OutgoingRecord r : replayed) {
            high = Math.max(high, r.event().getEventTime().toEpochMilli());
            assertThat(r.dueNanos()).isEqualTo((long) ((high - first) * 1e6 / 2.0));
        }
        assertThat(replayed.get(replayed.size() - 1).dueNanos()).isGreaterThan(0);
    }

    @Test
    void aRecordingWithOrdersReplaysEachEventToItsTopic(@TempDir Path dir) throws Exception {
        LoadgenSettings s = LoadgenSettings.load(new String[] {"--loadgen.events=2000", "--loadgen.malformed.fraction=0.01",
                "--loadgen.duplicate.fraction=0.05", "--loadgen.invalid.fraction=0.02", "--loadgen.orders.topic=orders",
                "--loadgen.orders.share=0.4"}, Map.of(), Instant.parse("2026-11-21T00:00:00Z"));
        Path file = dir.resolve("run.avro");
        List<OutgoingRecord> expected = record(s, file, true);
        assertThat(expected).extracting(OutgoingRecord::destination).contains(Destination.ORDERS, Destination.TRANSACTIONS);
        assertThat(ReplaySource.holdsOrders(file)).isTrue();
        List<OutgoingRecord> replayed = replay(file, 0);
        assertThat(replayed).extracting(OutgoingRecord::destination).containsExactlyElementsOf(expected.stream().map(OutgoingRecord::destination).toList());
        assertThat(replayed).extracting(OutgoingRecord::event).containsExactlyElementsOf(expected.stream().map(OutgoingRecord::event).toList());
        assertThat(replayed).extracting(OutgoingRecord::key).containsExactlyElementsOf(expected.stream().map(OutgoingRecord::key).toList());
    }

    @Test
    void speedZeroReplaysAsFastAsPossible(@TempDir Path dir) throws Exception {
        LoadgenSettings s = LoadgenSettings.load(new String[] {"--loadgen.events=50"}, Map.of(), Instant.parse("2026-11-21T00:00:00Z"));
        Path file = dir.resolve("run.avro");
        try (StreamRecorder recorder = new StreamRecorder(file)) {
            new EventGenerator(s, Duration.ofDays(35)).forEachRemaining(recorder::apply);
        }
        try (ReplaySource source = new ReplaySource(file, 0)) {
            source.forEachRemaining(r -> assertThat(r.dueNanos()).isZero());
        }
    }

    /** Records the generated stream; returns the records the file should hold (all but MALFORMED), checking the count. */
    private static List<OutgoingRecord> record(LoadgenSettings s, Path file, boolean withOrders) throws Exception {
        List<OutgoingRecord> sent = new ArrayList<>();
        try (StreamRecorder recorder = new StreamRecorder(file, withOrders)) {
            new EventGenerator(s, Duration.ofDays(35)).forEachRemaining(r -> sent.add(recorder.apply(r)));
            assertThat(recorder.skipped()).isEqualTo(sent.stream().filter(r -> r.kind() == RecordKind.MALFORMED).count()).isPositive();
        }
        List<OutgoingRecord> expected = sent.stream().filter(r -> r.kind() != RecordKind.MALFORMED).toList();
        assertThat(ReplaySource.count(file)).isEqualTo(expected.size());
        return expected;
    }

    private static List<OutgoingRecord> replay(Path file, double speed) throws Exception {
        List<OutgoingRecord> replayed = new ArrayList<>();
        try (ReplaySource source = new ReplaySource(file, speed)) {
            source.forEachRemaining(replayed::add);
        }
        return replayed;
    }
}
