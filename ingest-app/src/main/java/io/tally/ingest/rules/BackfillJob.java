package io.tally.ingest.rules;

import com.azure.cosmos.CosmosAsyncClient;
import io.tally.cosmos.CosmosClients;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.source.SourceTopics;
import io.tally.ingest.topology.CountedGrades;
import io.tally.ingest.topology.HistoryBound;
import io.tally.ingest.topology.TallyTopology;
import io.tally.rules.GradeRules;
import io.tally.rules.GradeVersion;
import io.tally.rules.RuleVersions;
import io.tally.rules.source.Sources;
import io.tally.rules.state.RulesState;
import io.tally.rules.state.RulesStateStore;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;

/**
 * Fills the history of the grades a rules change added or changed ({@code backfill: pending} in the record): runs
 * {@link TallyTopology#buildHistory} as its own exactly-once Kafka Streams application
 * ({@code <application id>-backfill-g<generation>}) over every input partition from its start to its end as of the seam
 * plus {@code backfill.end-margin.ms}, waits until its committed offsets reach those ends and the live aggregation and
 * sink have taken what it sent (so the values are in Cosmos), then marks the grades complete in the record. Killed, it resumes where it committed; run again after it completed, it finds nothing pending.
 * The live aggregation must be running the record's generation (stage 5 applies what it sends); the job waits for the
 * seam, by which instances on older rules have stopped.
 */
public final class BackfillJob {
    public static final int EXIT_DONE = 0;
    public static final int EXIT_USAGE = 2;
    /** The record changed generation while the backfill ran: what it sent was for grades no longer counted as they were. */
    public static final int EXIT_RULES_CHANGED = 4;

    private static final Duration KAFKA_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration POLL = Duration.ofMillis(500);
    /** About two of the live run's commits when it keeps up: the lag shows a change of pace no sooner. */
    private static final Duration LIVE_FIRST_COOLDOWN = Duration.ofSeconds(1);

    private final BackfillSettings settings;
    private final PrintStream out;
    private final Clock clock;

    public BackfillJob(BackfillSettings settings, PrintStream out, Clock clock) {
        this.settings = settings;
        this.out = out;
        this.clock = clock;
    }

    /** What a run did. */
    public record Report(long generation, List<String> grades, Instant seam, Map<TopicPartition, Long> ends, long recordsBeforeEnd,
                         long recordsRead, long deltasSent, Duration took) {
        public String render() {
            String seamOffsets = ends.entrySet().stream().sorted(Map.Entry.comparingByKey((a, b) -> a.toString().compareTo(b.toString())))
                    .map(e -> e.getKey() + "@" + e.getValue()).collect(Collectors.joining(" "));
            return "backfill of generation " + generation + " complete: " + grades.size() + " grade(s) " + grades + "\n"
                    + "  seam " + seam + "; read to (exclusive) " + seamOffsets + "\n"
                    + "  records before the ends " + recordsBeforeEnd + ", read by this run " + recordsRead
                    + ", grade-bucket deltas sent to stage 5 " + deltasSent + ", took " + took.toSeconds() + " s\n";
        }
    }

    /** Runs to the end; empty when nothing was pending. */
    public Optional<Report> run() throws InterruptedException {
        IngestSettings ingest = settings.ingest();
        long t0 = System.nanoTime();
        CosmosAsyncClient cosmos = CosmosClients.build(ingest.cosmos());
        try {
            RulesStateStore store = new RulesStateStore(CosmosClients.container(cosmos, ingest.cosmos()));
            Optional<RulesStateStore.Stored> stored = store.read();
            if (stored.isEmpty()) {
                out.println("no rules record in " + ingest.cosmos().container() + ": nothing to backfill");
                return Optional.empty();
            }
            RulesState state = stored.get().state();
            List<RulesState.Grade> pending = state.grades().stream().filter(g -> !g.complete()).toList();
            if (pending.isEmpty()) {
                out.println("nothing to backfill: every grade of generation " + state.generation() + " is complete");
                return Optional.empty();
            }
            Sources sourcesFile = Sources.load(ingest.aggregation().sourcesLocation());
            GradeRules rules = state.rules();
            requireSameVersions(state, rules, sourcesFile);
            Instant seam = pending.get(0).countingFrom();
            List<String> names = pending.stream().map(RulesState.Grade::grade).toList();
            out.println("backfill of generation " + state.generation() + ": " + names + ", history before " + seam);
            waitFor(seam.plus(settings.endMargin()));

            SourceTopics sources = new SourceTopics(sourcesFile, ingest.topics().prefix());
            Map<TopicPartition, Long> begins = new HashMap<>();
            Map<TopicPartition, Long> ends = ends(ingest, sources, begins);
            long before = ends.entrySet().stream().mapToLong(e -> e.getValue() - begins.getOrDefault(e.getKey(), 0L)).sum();
            String applicationId = ingest.applicationId() + "-backfill-g" + state.generation();
            Optional<LiveFirstPace> pace = settings.recordsPerSecond() > 0 && !settings.liveLagBound().isZero()
                    ? Optional.of(new LiveFirstPace(settings.recordsPerSecond(), settings.liveLagBound(), LIVE_FIRST_COOLDOWN))
                    : Optional.empty();
            HistoryBound.End end = new HistoryBound.End(ends, pace.map(LiveFirstPace::rate).orElse(settings.recordsPerSecond()));
            StreamsBuilder builder = new StreamsBuilder();
            TallyTopology.buildHistory(builder, ingest.applicationId(), ingest.aggregation().topology(), rules, CountedGrades.of(state),
                    sources, TallyTopology.eventDeserializer(new SchemaRegistryClient(ingest.registryClient())), end);
            try (KafkaStreams streams = new KafkaStreams(builder.build(), IngestApp.streamsProperties(ingest, applicationId));
                 Admin admin = Admin.create(ingest.kafka().adminConfig(KAFKA_TIMEOUT))) {
                requireStageFiveInput(admin, ingest.applicationId());
                streams.start();
                follow(admin, applicationId, streams, ends, begins, before, end, ingest.applicationId(), pace);
                streams.close(Duration.ofSeconds(60));
                // "complete" must mean readable: what the backfill sent has to pass stage 5 and the sink first
                awaitConsumed(admin, ingest, ingest.applicationId(), TallyTopology.repartitionTopic(ingest.applicationId()), "the live aggregation");
                awaitConsumed(admin, ingest, ingest.sink().groupId(), ingest.topics().bucketUpdates(), "the sink");
            }
            if (!markComplete(store, state, pending)) return Optional.empty();
            Report r = new Report(state.generation(), names, seam, ends, before, end.passed(), end.deltas(),
                    Duration.ofNanos(System.nanoTime() - t0));
            out.print(r.render());
            return Optional.of(r);
        } finally {
            cosmos.close();
        }
    }

    /** The backfill counts the record's versions: a sources file that reads the fields elsewhere would count other values. */
    private static void requireSameVersions(RulesState state, GradeRules rules, Sources sources) {
        List<GradeVersion> mine = RuleVersions.of(rules, sources);
        if (!Set.copyOf(mine).equals(Set.copyOf(state.versions()))) {
            throw new BackfillException(EXIT_USAGE, "the sources file (ingest.sources.file) gives the applied rules other versions than the"
                    + " record's: give the backfill the sources file ingest-app runs with");
        }
    }

    private void waitFor(Instant when) throws InterruptedException {
        Duration left = Duration.between(clock.instant(), when);
        if (left.isNegative() || left.isZero()) return;
        out.println("waiting " + left.toSeconds() + " s for " + when + " (the seam plus backfill.end-margin.ms): records stamped"
                + " before the seam are still arriving, and instances on the older rules are stopping");
        Thread.sleep(left.toMillis());
    }

    /** Every source partition's end offset now (read_committed: the last stable offset), and its start into {@code begins}. */
    private static Map<TopicPartition, Long> ends(IngestSettings ingest, SourceTopics sources, Map<TopicPartition, Long> begins) {
        Map<String, Object> config = new HashMap<>(ingest.kafka().consumerConfig());
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            Set<String> topics = new TreeSet<>(sources.named());
            boolean patterns = sources.sources().sources().stream().anyMatch(s -> s.topicPattern().isPresent());
            Map<String, List<PartitionInfo>> all = c.listTopics(KAFKA_TIMEOUT);
            if (patterns) all.keySet().stream().filter(t -> sources.sourceOf(t).isPresent()).forEach(topics::add);
            for (String t : topics) {
                List<PartitionInfo> infos = all.get(t);
                if (infos == null) continue;
                infos.forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
            }
            begins.putAll(c.beginningOffsets(partitions, KAFKA_TIMEOUT));
            return new HashMap<>(c.endOffsets(partitions, KAFKA_TIMEOUT));
        }
    }

    /** The live application's stage-5 input must exist: the backfill feeds it, and only the live run creates it. */
    private static void requireStageFiveInput(Admin admin, String liveApplicationId) throws InterruptedException {
        String topic = TallyTopology.repartitionTopic(liveApplicationId);
        try {
            if (!admin.listTopics().names().get().contains(topic)) {
                throw new BackfillException(EXIT_USAGE, "no topic " + topic + ": start ingest-app (application id " + liveApplicationId
                        + ") with the applied rules first; the backfill feeds its stage 5");
            }
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("cannot list topics: " + e.getCause(), e.getCause());
        }
    }

    /**
     * Waits until the backfill's committed offsets reach every end, printing progress; meanwhile sets the backfill's rate
     * from how far behind the live aggregation ({@code liveApplicationId}) is on the input ({@link LiveFirstPace}).
     */
    private void follow(Admin admin, String applicationId, KafkaStreams streams, Map<TopicPartition, Long> ends,
                        Map<TopicPartition, Long> begins, long total, HistoryBound.End end, String liveApplicationId,
                        Optional<LiveFirstPace> pace) throws InterruptedException {
        long lastPrint = 0;
        while (true) {
            if (streams.state() == KafkaStreams.State.ERROR || streams.state() == KafkaStreams.State.NOT_RUNNING) {
                throw new IllegalStateException("the backfill's Kafka Streams application stopped (" + streams.state() + "); see the log, then run again");
            }
            Map<TopicPartition, OffsetAndMetadata> committed;
            try {
                committed = committed(admin, applicationId, new ListConsumerGroupOffsetsSpec());
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("cannot read the backfill's offsets: " + e.getCause(), e.getCause());
            }
            long done = 0;
            boolean complete = true;
            for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
                long begin = begins.getOrDefault(e.getKey(), 0L);
                if (e.getValue() <= begin) continue; // nothing retained before the end
                OffsetAndMetadata c = committed.get(e.getKey());
                long at = c == null ? begin : Math.max(begin, c.offset());
                done += Math.min(at, e.getValue()) - begin;
                if (at < e.getValue()) complete = false;
            }
            long now = System.nanoTime();
            if (pace.isPresent()) end.rate(observeLive(admin, liveApplicationId, ends.keySet(), pace.get(), now));
            if (complete || now - lastPrint >= settings.progressInterval().toNanos()) {
                lastPrint = now;
                String rate = pace.map(p -> String.format(java.util.Locale.ROOT, ", reading at most %,.0f records/s (live first: the live "
                        + "aggregation is %.1f s behind)", p.rate(), p.lagSeconds())).orElse("");
                System.err.printf("backfill: %,d / %,d records (%.1f%%), %,d deltas sent%s%n", done, total,
                        total == 0 ? 100.0 : 100.0 * done / total, end.deltas(), rate);
            }
            if (complete) return;
            Thread.sleep(POLL.toMillis());
        }
    }

    /** One look at the live aggregation's lag on the input partitions; the rate from now on (the last one if it cannot look). */
    private static double observeLive(Admin admin, String liveApplicationId, Set<TopicPartition> partitions, LiveFirstPace pace, long now)
            throws InterruptedException {
        try {
            Map<TopicPartition, Long> endOffsets = latestOffsets(admin, partitions);
            Map<TopicPartition, OffsetAndMetadata> committed = committed(admin, liveApplicationId,
                    new ListConsumerGroupOffsetsSpec().topicPartitions(partitions));
            long ends = 0;
            long at = 0;
            for (var e : endOffsets.entrySet()) {
                OffsetAndMetadata c = committed.get(e.getKey());
                ends += e.getValue();
                at += c == null ? e.getValue() : c.offset(); // nothing committed there: no lag it can tell
            }
            return pace.observe(now, ends, at);
        } catch (java.util.concurrent.ExecutionException e) {
            // a coordinator moving, a broker restarting: the pace is a hint, the backfill goes on at its last rate
            return pace.rate();
        }
    }

    /** The end offset of each partition now. */
    private static Map<TopicPartition, Long> latestOffsets(Admin admin, java.util.Collection<TopicPartition> partitions)
            throws InterruptedException, java.util.concurrent.ExecutionException {
        Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
        partitions.forEach(tp -> latest.put(tp, org.apache.kafka.clients.admin.OffsetSpec.latest()));
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
        return ends;
    }

    /** What consumer group {@code group} has committed, of the partitions {@code spec} names (all when it names none). */
    private static Map<TopicPartition, OffsetAndMetadata> committed(Admin admin, String group, ListConsumerGroupOffsetsSpec spec)
            throws InterruptedException, java.util.concurrent.ExecutionException {
        return admin.listConsumerGroupOffsets(Map.of(group, spec)).partitionsToOffsetAndMetadata(group).get();
    }

    /**
     * Waits until consumer group {@code group} has committed {@code topic} up to its end as of now: stage 5 has applied
     * every delta the backfill sent (the aggregation), or the sink has written every document those made (the sink
     * commits only after its writes). A running live input keeps adding to both, so the end is taken once, not chased.
     */
    private void awaitConsumed(Admin admin, IngestSettings ingest, String group, String topic, String who) throws InterruptedException {
        Map<TopicPartition, Long> target;
        try {
            var description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            target = latestOffsets(admin, description.partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList());
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("cannot read the end of " + topic + ": " + e.getCause(), e.getCause());
        }
        long started = System.nanoTime();
        long lastPrint = started;
        while (true) {
            Map<TopicPartition, OffsetAndMetadata> committed;
            try {
                committed = committed(admin, group, new ListConsumerGroupOffsetsSpec());
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("cannot read the offsets of " + group + ": " + e.getCause(), e.getCause());
            }
            if (target.values().stream().anyMatch(o -> o > 0) && target.keySet().stream().noneMatch(committed::containsKey)) {
                throw new BackfillException(EXIT_USAGE, "consumer group " + group + " has committed nothing on " + topic + ": is it "
                        + who + "'s? (ingest.application-id, sink.group-id: give the backfill the live deployment's)");
            }
            long behind = 0;
            Map<TopicPartition, Long> lagging = new HashMap<>();
            for (Map.Entry<TopicPartition, Long> t : target.entrySet()) {
                OffsetAndMetadata c = committed.get(t.getKey());
                long at = c == null ? 0 : c.offset();
                if (at < t.getValue()) lagging.put(t.getKey(), at);
                behind += Math.max(0, t.getValue() - at);
            }
            if (behind == 0 || nothingToTake(ingest, lagging, target)) return;
            long now = System.nanoTime();
            if (now - lastPrint >= settings.progressInterval().toNanos()) {
                lastPrint = now;
                System.err.printf("backfill: waiting for %s to take what it sent: %,d records behind on %s (%d s)%n", who, behind, topic,
                        Duration.ofNanos(now - started).toSeconds());
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /**
     * Whether no record a consumer would take lies between each lagging partition's committed offset and its target: a
     * group that has taken every record stops short of the end by the markers of the transactions that wrote them
     * (read_committed consumers skip them, and a consumer with nothing new to process commits nothing new).
     */
    private static boolean nothingToTake(IngestSettings ingest, Map<TopicPartition, Long> lagging, Map<TopicPartition, Long> target) {
        Map<String, Object> config = new HashMap<>(ingest.kafka().consumerConfig());
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.remove(ConsumerConfig.GROUP_ID_CONFIG);
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.assign(lagging.keySet());
            lagging.forEach(c::seek);
            long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (System.nanoTime() < deadline) {
                for (var r : c.poll(Duration.ofMillis(200))) {
                    if (r.offset() < target.get(new TopicPartition(r.topic(), r.partition()))) return false;
                }
                if (lagging.keySet().stream().allMatch(tp -> c.position(tp) >= target.get(tp))) return true;
            }
            return false;
        }
    }

    /** Marks the backfilled grades complete, read again on a conflict; false (after saying why) when the generation moved. */
    private boolean markComplete(RulesStateStore store, RulesState ran, List<RulesState.Grade> grades) {
        while (true) {
            RulesStateStore.Stored now = store.read().orElseThrow(() -> new IllegalStateException("the rules record vanished"));
            if (now.state().generation() != ran.generation()) {
                throw new BackfillException(EXIT_RULES_CHANGED, "generation " + now.state().generation() + " was applied while the backfill of"
                        + " generation " + ran.generation() + " ran; its grades are not marked complete");
            }
            RulesState next = now.state();
            for (RulesState.Grade g : grades) next = next.backfilled(g.rule(), g.unit());
            try {
                store.replace(now, next);
                return true;
            } catch (RulesStateStore.Conflict e) {
                // someone else changed the record (another backfill finishing): read again and decide again
            }
        }
    }

    /** A backfill that cannot run or finish, with the exit status that says why. */
    public static final class BackfillException extends RuntimeException {
        private final int exit;

        BackfillException(int exit, String message) {
            super(message);
            this.exit = exit;
        }

        public int exit() {
            return exit;
        }
    }
}
