package io.tally.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.models.PartitionKey;
import io.tally.ingest.topology.EntityDeltas;
import io.tally.ingest.topology.EntityDeltasSerde;
import io.tally.model.EntityBucketId;
import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Freshness: how long an event takes from being produced to being visible through read-service, and where
 * on the way the time goes.
 *
 * <p>A producer thread sends one marker event per tick (APPROVED, amount 1, one dedicated customer, one
 * fixed event time) into the run's transactions topic; a poller thread reads that customer's hour bucket of a grade
 * that counts the markers ({@link #grade}: {@code spend-per-customer} when the rules have it) from read-service as
 * fast as it answers. The markers share a key,
 * hence a partition, so they become visible in order: when the bucket's count reaches n, markers 1..n are
 * visible, and marker i's freshness is that observation's time minus its send time (resolution: one poll).
 *
 * <p>With {@link #observeHops} the same counting runs at every hop before read-service ({@link Hop}): a
 * read-committed consumer of the repartition topic adds up the bucket's deltas (visible once stage 3's
 * transaction commits), one of {@code bucket-updates} reads its count (once stage 5's commits), and a point
 * read of Cosmos through the SDK its stored count (once the sink's write lands). Each hop's time minus the
 * previous hop's is what that hop costs.
 *
 * <p>Threads: {@link #start()} and {@link #stop()} from the caller; sends on a scheduler thread; polls on
 * "freshness-poller" and one "freshness-hop-*" thread per observed hop. The sample arrays are guarded by
 * {@code this}.
 */
final class FreshnessProbe implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Deserializer<EntityDeltas> DELTAS = EntityDeltasSerde.serde().deserializer();
    static final String DOMAIN = "probe";
    /** The default rules' grade of a customer's spend, which the markers count for. */
    private static final String DEFAULT_GRADE = "spend-per-customer";
    private static final long POLL_PAUSE_MS = 10;
    private static final long BACKOFF_MS = 100;

    /** Where a marker can be seen on its way, in pipeline order. */
    enum Hop {
        REPARTITIONED("stage 3 committed: on the repartition topic"),
        EMITTED("stage 5 committed: on bucket-updates"),
        WRITTEN("sink wrote it: in Cosmos"),
        SERVED("served by read-service");

        final String label;

        Hop(String label) { this.label = label; }
    }

    /**
     * One marker: send time and the time each hop first showed it (0 while not yet, or not observed), all
     * System.nanoTime(); {@code visibleNanos} is read-service's.
     */
    record Marker(long producedNanos, long[] seenNanos) {
        long visibleNanos() { return seenNanos[Hop.SERVED.ordinal()]; }

        double freshnessMs() { return atMs(Hop.SERVED); }

        /** Milliseconds from send until {@code hop} showed it, or NaN when it did not. */
        double atMs(Hop hop) {
            long t = seenNanos[hop.ordinal()];
            return t == 0 ? Double.NaN : (t - producedNanos) / 1e6;
        }
    }

    /** Milliseconds from send until {@code hop} showed them, of the {@code markers} it showed, ascending. */
    static List<Double> sortedMs(List<Marker> markers, Hop hop) {
        List<Double> out = new ArrayList<>();
        for (Marker m : markers) {
            double t = m.atMs(hop);
            if (!Double.isNaN(t)) out.add(t);
        }
        out.sort(Double::compare);
        return out;
    }

    private final String topic;
    private final String bootstrapServers;
    private final String customer;
    private final Instant eventTime = Instant.now().truncatedTo(ChronoUnit.MINUTES);
    private final URI bucketUri;
    private final Duration interval;
    private final KafkaProducer<String, byte[]> producer;
    private final AvroSerializer<TransactionEvent> serializer;
    private final ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "freshness-sender"));
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final String pk;
    private final long hour;
    /** The grade bucket's id, as the read API names it. */
    private final String bucketId;
    /** The id of the entity bucket document holding it, on bucket-updates and in Cosmos. */
    private final String documentId;
    private final List<Long> produced = new ArrayList<>();
    private final Map<Hop, List<Long>> seen = new EnumMap<>(Hop.class);
    private final List<Long> visible;
    private final List<Thread> hopWatchers = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean polling = true;
    private Thread poller;

    private final String grade;

    /**
     * The grade the markers are counted by under {@code rules}: {@code spend-per-customer} when present, else the first
     * rule over the customer, without qualifier, kept per hour, whose filter lets an APPROVED web order through.
     *
     * @throws IllegalArgumentException naming what a rules file needs when none fits
     */
    static String grade(GradeRules rules) {
        List<GradeRule> fitting = rules.rules().stream()
                .filter(r -> r.entityField().equals("customerId") && !r.qualified() && r.units().contains(io.tally.model.TimeUnit.HOUR))
                .filter(r -> r.filter().map(f -> f.field().equals("status") && f.in().contains("APPROVED")
                        || f.field().equals("channel") && f.in().contains("WEB")).orElse(true))
                .toList();
        return fitting.stream().map(GradeRule::name).filter(DEFAULT_GRADE::equals).findFirst()
                .or(() -> fitting.stream().map(GradeRule::name).findFirst())
                .orElseThrow(() -> new IllegalArgumentException("the freshness probe needs a rule over customerId, without qualifier, "
                        + "kept per hour, that counts APPROVED web orders (like the default rules' " + DEFAULT_GRADE
                        + "); the rules file has none"));
    }

    /**
     * @param rules     the run's rules: the markers are counted by {@link #grade}
     * @param perSecond markers per second (e.g. 20)
     */
    FreshnessProbe(String bootstrapServers, String registryUrl, String topic, int readPort, String runId, GradeRules rules, int perSecond) {
        this.grade = grade(rules);
        this.topic = topic;
        this.customer = "probe-" + runId;
        this.interval = Duration.ofNanos(1_000_000_000L / perSecond);
        this.hour = eventTime.getEpochSecond() / 3600;
        this.pk = DOMAIN + "|" + customer;
        this.bucketId = grade + "|hour|" + hour;
        this.documentId = EntityBucketId.main(io.tally.model.TimeUnit.HOUR, hour);
        for (Hop h : Hop.values()) seen.put(h, new ArrayList<>());
        this.visible = seen.get(Hop.SERVED);
        this.bucketUri = URI.create("http://127.0.0.1:" + readPort + "/v1/buckets/" + enc(pk) + "/" + enc(bucketId));
        this.bootstrapServers = bootstrapServers;
        this.producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 0), new StringSerializer(), new ByteArraySerializer());
        this.serializer = new AvroSerializer<>(new SchemaRegistryClient(registryUrl));
        this.serializer.configure(Map.of(), false);
    }

    /**
     * Also times the hops before read-service: stage 3's commit (the Streams application's repartition
     * topic), stage 5's ({@code bucket-updates}) and the sink's write ({@code container}). Call before
     * {@link #start()}. The point reads cost 1 RU each, so leave it off where a budget is measured.
     */
    FreshnessProbe observeHops(String repartitionTopic, String bucketUpdatesTopic, CosmosAsyncContainer container) {
        // A delta's count is what it adds; the repartition topic carries increments, so they are summed.
        long[] repartitioned = {0};
        hopWatchers.add(watcher(Hop.REPARTITIONED, () -> watchTopic(repartitionTopic, Hop.REPARTITIONED, r -> {
            if (!pk.equals(r.key()) || r.value() == null) return -1;
            for (EntityDeltas.Delta d : DELTAS.deserialize(repartitionTopic, r.value()).deltas()) {
                if (d.rule().equals(grade) && d.qualifier() == null && d.unit() == io.tally.model.TimeUnit.HOUR && d.bucketIndex() == hour) {
                    repartitioned[0] += d.count();
                }
            }
            return repartitioned[0];
        })));
        String updateKey = pk + "|" + documentId;
        hopWatchers.add(watcher(Hop.EMITTED, () -> watchTopic(bucketUpdatesTopic, Hop.EMITTED, r -> {
            if (!updateKey.equals(r.key()) || r.value() == null) return -1;
            return count(JSON.readTree(r.value()).path("grades").path(grade));
        })));
        hopWatchers.add(watcher(Hop.WRITTEN, () -> {
            while (polling) {
                try {
                    JsonNode doc = container.readItem(documentId, new PartitionKey(pk), JsonNode.class).block().getItem();
                    observed(Hop.WRITTEN, count(doc.path("grades").path(grade)), System.nanoTime());
                    Thread.sleep(POLL_PAUSE_MS);
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    sleepQuietly(POLL_PAUSE_MS); // 404 until the first marker lands
                }
            }
        }));
        return this;
    }

    /**
     * A grade's count in an entity bucket's JSON (on bucket-updates and in Cosmos): the first element of its array
     * ({@code [count, sum, min, max]}), or the {@code count} field of the object form documents had before it.
     */
    static long count(JsonNode grade) {
        return grade.isArray() ? grade.path(0).asLong() : grade.path("count").asLong();
    }

    private Thread watcher(Hop hop, Runnable body) {
        Thread t = new Thread(body, "freshness-hop-" + hop.name().toLowerCase(java.util.Locale.ROOT));
        t.setDaemon(true);
        return t;
    }

    /** Reads {@code topic} read-committed from its start; {@code count} gives the bucket's count after a record, or -1. */
    private void watchTopic(String topic, Hop hop, RecordCount count) {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = List.of();
            while (polling && partitions.isEmpty()) { // the repartition topic appears once Streams has started
                try {
                    partitions = consumer.partitionsFor(topic, Duration.ofSeconds(1)).stream()
                            .map(p -> new TopicPartition(topic, p.partition())).toList();
                } catch (Exception e) {
                    partitions = List.of();
                }
                if (partitions.isEmpty()) sleepQuietly(200);
            }
            consumer.assign(partitions);
            while (polling) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(50))) {
                    long c = count.of(r);
                    if (c >= 0) observed(hop, c, System.nanoTime());
                }
            }
        } catch (InterruptException | org.apache.kafka.common.errors.WakeupException e) {
            // closing
        } catch (Exception e) {
            failure.compareAndSet(null, new IllegalStateException("watching " + topic + " for the freshness markers failed", e));
        }
    }

    @FunctionalInterface
    private interface RecordCount {
        long of(ConsumerRecord<String, byte[]> record) throws Exception;
    }

    /** Markers 1..count are at {@code hop} by {@code now}. */
    private synchronized void observed(Hop hop, long count, long now) {
        List<Long> times = seen.get(hop);
        while (times.size() < Math.min(count, produced.size())) times.add(now);
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    FreshnessProbe start() {
        hopWatchers.forEach(Thread::start);
        sender.scheduleAtFixedRate(this::sendMarker, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
        poller = new Thread(this::poll, "freshness-poller");
        poller.setDaemon(true);
        poller.start();
        return this;
    }

    private void sendMarker() {
        int n;
        synchronized (this) {
            n = produced.size();
            produced.add(System.nanoTime());
        }
        TransactionEvent e = new TransactionEvent(customer + "-" + n, eventTime, DOMAIN, customer, null, null, "probe-sku", "probe",
                "WEB", new BigDecimal("1.0000"), "USD", "APPROVED", Map.of());
        producer.send(new ProducerRecord<>(topic, customer, serializer.serialize(topic, e)), (md, ex) -> {
            if (ex != null) failure.compareAndSet(null, ex);
        });
    }

    private void poll() {
        HttpRequest request = HttpRequest.newBuilder(bucketUri).timeout(Duration.ofSeconds(5)).GET().build();
        while (polling) {
            try {
                HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
                long now = System.nanoTime();
                if (r.statusCode() == 200) observed(Hop.SERVED, JSON.readTree(r.body()).path("count").asLong(), now);
                // 404 before the first marker lands; 429/503 when the container's budget is spent: do not add to it.
                Thread.sleep(r.statusCode() == 200 ? POLL_PAUSE_MS : BACKOFF_MS);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // A timed-out or refused read (read-service shedding load) is no observation; poll again.
            }
        }
    }

    /** Markers sent so far, each with its visibility time (0 = not visible yet). */
    synchronized List<Marker> markers() {
        List<Marker> out = new ArrayList<>(produced.size());
        for (int i = 0; i < produced.size(); i++) {
            long[] at = new long[Hop.values().length];
            for (Hop h : Hop.values()) at[h.ordinal()] = i < seen.get(h).size() ? seen.get(h).get(i) : 0;
            out.add(new Marker(produced.get(i), at));
        }
        return out;
    }

    /** Markers sent in [fromNanos, toNanos). */
    List<Marker> markersSentBetween(long fromNanos, long toNanos) {
        return markers().stream().filter(m -> m.producedNanos() >= fromNanos && m.producedNanos() < toNanos).toList();
    }

    /**
     * A window's freshness figures under {@code scenario}: its markers, p50 and p99 until read-service served them, and
     * the p99 until each hop before it that was observed. Returns the served times, ascending.
     */
    static List<Double> figures(BenchResults results, String scenario, List<Marker> markers) {
        List<Double> served = sortedMs(markers, Hop.SERVED);
        results.figure(scenario, "freshness markers", markers.size(), "events");
        if (served.isEmpty()) return served;
        results.figure(scenario, "freshness p50", EndToEndBench.percentile(served, 0.5), "ms")
                .figure(scenario, "freshness p99", EndToEndBench.percentile(served, 0.99), "ms");
        for (Hop hop : Hop.values()) {
            if (hop == Hop.SERVED) continue;
            List<Double> at = sortedMs(markers, hop);
            if (!at.isEmpty()) results.figure(scenario, "p99 until " + hop.label, EndToEndBench.percentile(at, 0.99), "ms");
        }
        return served;
    }

    /** Waits until the first marker is visible: the whole pipeline is up and warm. */
    void awaitFirstVisible(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            synchronized (this) {
                if (!visible.isEmpty()) return;
            }
            checkFailure();
            Thread.sleep(50);
        }
        throw new IllegalStateException("no freshness marker became visible at " + bucketUri + " within " + timeout);
    }

    /** Stops sending; keeps polling until every marker sent is visible or {@code timeout} passes. */
    void stopSending(Duration timeout) throws InterruptedException {
        sender.shutdown();
        sender.awaitTermination(5, TimeUnit.SECONDS);
        producer.flush();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            synchronized (this) {
                if (visible.size() >= produced.size()) break;
            }
            Thread.sleep(50);
        }
        checkFailure();
    }

    private void checkFailure() {
        if (failure.get() != null) throw new IllegalStateException("a freshness marker was not acknowledged", failure.get());
    }

    @Override
    public void close() {
        sender.shutdownNow();
        polling = false;
        if (poller != null) poller.interrupt();
        hopWatchers.forEach(Thread::interrupt);
        producer.close(Duration.ofSeconds(5));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
