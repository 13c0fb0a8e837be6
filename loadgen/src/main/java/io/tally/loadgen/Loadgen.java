package io.tally.loadgen;

import io.tally.loadgen.replay.ReplaySource;
import io.tally.loadgen.replay.StreamRecorder;
import io.tally.loadgen.rules.RuleSet;
import io.tally.loadgen.truth.GroundTruth;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One loadgen run: build the source (generator or replay file), pace and encode it, send it through the
 * {@link CheckedSender}, feed every acknowledged record to the {@link GroundTruth}, and write the
 * ground-truth file. Usable from tests and benchmarks without a process boundary.
 *
 * <p>Threads: the calling thread blocks in {@link #run} until every record has a send result; records
 * are generated and encoded on a "loadgen-pacer" thread, results handled on reactor-kafka's result
 * thread, progress printed from a "loadgen-progress" thread.
 *
 * <p>Errors: send failures are counted, never thrown ({@link Summary#failed()}); a failure to build or
 * encode records (rules file, registry, replay file) is thrown, after the sender is closed.
 */
public final class Loadgen {

    /**
     * What a run did.
     *
     * @param planned            records the run meant to send
     * @param acknowledgedByKind acknowledged records by what they were made to exercise
     * @param acknowledgedByTopic acknowledged records by topic, the transactions topic first (orders only when set)
     * @param truth              the ground truth of the acknowledged records (absent when switched off)
     * @param failed             records not acknowledged: failed sends, plus every planned record without a
     *                           result when sending stopped early
     * @param recorded           events written to loadgen.record-file
     * @param aborted            why sending stopped before the end, if it did
     */
    public record Summary(LoadgenSettings.Mode mode, long planned, long sent, long acknowledged, long failed,
                          Map<RecordKind, Long> acknowledgedByKind, Map<String, Long> acknowledgedByTopic, Duration elapsed, Instant start, Duration window,
                          Optional<GroundTruth> truth, Optional<Path> groundTruthFile, long recorded,
                          Optional<String> aborted) {

        /** Acknowledged records per second of the whole run. */
        public double ratePerSecond() {
            return acknowledged * 1e9 / Math.max(1, elapsed.toNanos());
        }

        /**
         * Total amount per customer of the events that count (valid, unique, in time), every status: what
         * the walking skeleton's built-in grade {@code spend} sums. Empty when the ground truth is off.
         */
        public Map<String, BigDecimal> spendByCustomer() {
            return truth.map(GroundTruth::amountByCustomer).orElse(Map.of());
        }
    }

    private Loadgen() {}

    public static Summary run(LoadgenSettings s) throws IOException {
        return run(s, System.err);
    }

    public static Summary run(LoadgenSettings s, PrintStream progressOut) throws IOException {
        RuleSet rules = RuleSet.load(s.rulesFile());
        Optional<GroundTruth> truth = s.groundTruthFile().map(f -> new GroundTruth(rules, s.futureSkew()));
        Map<RecordKind, Long> byKind = new EnumMap<>(RecordKind.class);
        Map<Destination, Long> byDestination = new EnumMap<>(Destination.class);
        SendCounters counters = new SendCounters();
        Instant startedAt = Instant.now();
        long t0 = System.nanoTime();

        ReplaySource replay = null;
        StreamRecorder recorder = null;
        Scheduler pacer = Schedulers.newSingle("loadgen-pacer");
        try (CheckedSender sender = new CheckedSender(s)) {
            Iterator<OutgoingRecord> source;
            long planned;
            boolean unpaced;
            boolean withOrders;
            if (s.mode() == LoadgenSettings.Mode.REPLAY) {
                Path file = s.replayFile().orElseThrow();
                withOrders = ReplaySource.holdsOrders(file);
                if (withOrders && s.ordersTopic().isEmpty()) {
                    throw new IllegalArgumentException(file + " was recorded with orders (OrderEvents): set loadgen.orders.topic "
                            + "to the topic they go to");
                }
                planned = ReplaySource.count(file);
                source = replay = new ReplaySource(file, s.replaySpeed());
                unpaced = s.replaySpeed() == 0;
            } else {
                EventGenerator generator = new EventGenerator(s, rules.lateBound());
                planned = generator.total();
                withOrders = s.ordersShare() > 0;
                source = generator;
                unpaced = RateSchedule.of(s).unpaced();
            }
            UnaryOperator<OutgoingRecord> encode = new RecordEncoder(new SchemaRegistryClient(s.registryClient()), s.topic(),
                    s.ordersTopic().orElse(null), s.firstV2Sequence(planned));
            if (s.recordFile().isPresent()) {
                recorder = new StreamRecorder(s.recordFile().get(), withOrders);
                StreamRecorder rec = recorder;
                UnaryOperator<OutgoingRecord> plain = encode;
                encode = r -> rec.apply(plain.apply(r));
            }
            Flux<OutgoingRecord> records = unpaced ? Pacer.unpaced(source, encode, pacer) : Pacer.paced(source, encode, pacer);
            Optional<Throwable> aborted;
            ProgressReporter progress = new ProgressReporter(counters, planned, s.progressInterval(), progressOut);
            try {
                aborted = sender.send(records, counters, (r, timestampMs) -> {
                    byKind.merge(r.kind(), 1L, Long::sum);
                    byDestination.merge(r.destination(), 1L, Long::sum);
                    truth.ifPresent(t -> {
                        if (r.kind() == RecordKind.MALFORMED) t.onUndecodable();
                        else t.onEvent(r.event(), Instant.ofEpochMilli(timestampMs));
                    });
                });
            } finally {
                progress.close();
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - t0);
            long recorded = recorder == null ? 0 : recorder.written();
            long failed = aborted.isPresent() ? planned - counters.acked() : counters.failed();
            Summary summary = new Summary(s.mode(), planned, counters.sent(), counters.acked(), failed,
                    Map.copyOf(byKind), byTopic(s, byDestination), elapsed, s.start(), s.window(), truth, s.groundTruthFile(), recorded,
                    aborted.map(Throwable::toString));
            if (truth.isPresent()) truth.get().write(s.groundTruthFile().get(), runDescription(s, summary, startedAt));
            return summary;
        } finally {
            pacer.dispose();
            if (recorder != null) recorder.close();
            if (replay != null) replay.close();
        }
    }

    private static Map<String, Long> byTopic(LoadgenSettings s, Map<Destination, Long> byDestination) {
        Map<String, Long> out = new LinkedHashMap<>();
        out.put(s.topic(), byDestination.getOrDefault(Destination.TRANSACTIONS, 0L));
        s.ordersTopic().ifPresent(t -> out.put(t, byDestination.getOrDefault(Destination.ORDERS, 0L)));
        return Collections.unmodifiableMap(out);
    }

    /** The {@code run} section of the ground-truth file: enough to reproduce the run and judge the file. */
    private static Map<String, Object> runDescription(LoadgenSettings s, Summary sum, Instant startedAt) {
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("mode", s.mode().name().toLowerCase(java.util.Locale.ROOT));
        run.put("topic", s.topic());
        run.put("ordersTopic", s.ordersTopic().orElse(null));
        run.put("complete", sum.failed() == 0 && sum.acknowledged() == sum.planned());
        run.put("startedAt", startedAt.toString());
        run.put("elapsedMs", sum.elapsed().toMillis());
        run.put("planned", sum.planned());
        run.put("sent", sum.sent());
        run.put("acknowledged", sum.acknowledged());
        run.put("failed", sum.failed());
        Map<String, Long> kinds = new LinkedHashMap<>();
        sum.acknowledgedByKind().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> kinds.put(e.getKey().name(), e.getValue()));
        run.put("acknowledgedByKind", kinds);
        run.put("acknowledgedByTopic", sum.acknowledgedByTopic());
        run.put("rulesFile", s.rulesFile().toString());
        run.put("futureSkewMs", s.futureSkew().toMillis());
        run.put("v2FromFraction", s.v2FromFraction());
        if (s.mode() == LoadgenSettings.Mode.REPLAY) {
            run.put("replayFile", s.replayFile().map(Path::toString).orElse(null));
            run.put("replaySpeed", s.replaySpeed());
        } else {
            run.put("seed", s.seed());
            run.put("domain", s.domain());
            run.put("start", s.start().toString());
            run.put("windowMs", s.window().toMillis());
            run.put("rate", s.rate());
            run.put("fractions", s.fractions());
            run.put("ordersShare", s.ordersShare());
        }
        return run;
    }
}
