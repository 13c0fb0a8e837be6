package io.tally.tests.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Freshness: how long an event takes from being produced to being visible through read-service.
 *
 * <p>A producer thread sends one marker event per tick (APPROVED, amount 1, one dedicated customer, one
 * fixed event time) into the run's transactions topic; a poller thread reads that customer's
 * {@code spend-per-customer} hour bucket from read-service as fast as it answers. The markers share a key,
 * hence a partition, so they become visible in order: when the bucket's count reaches n, markers 1..n are
 * visible, and marker i's freshness is that observation's time minus its send time (resolution: one poll).
 *
 * <p>Threads: {@link #start()} and {@link #stop()} from the caller; sends on a scheduler thread; polls on
 * "freshness-poller". The sample arrays are guarded by {@code this}.
 */
final class FreshnessProbe implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String DOMAIN = "probe";
    private static final String GRADE = "spend-per-customer";
    private static final long POLL_PAUSE_MS = 10;
    private static final long BACKOFF_MS = 100;

    /** One marker: send time and the time it was first seen (0 while not yet), both System.nanoTime(). */
    record Marker(long producedNanos, long visibleNanos) {
        double freshnessMs() { return (visibleNanos - producedNanos) / 1e6; }
    }

    private final String topic;
    private final String customer;
    private final Instant eventTime = Instant.now().truncatedTo(ChronoUnit.MINUTES);
    private final URI bucketUri;
    private final Duration interval;
    private final KafkaProducer<String, byte[]> producer;
    private final AvroSerializer<TransactionEvent> serializer;
    private final ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "freshness-sender"));
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Long> produced = new ArrayList<>();
    private final List<Long> visible = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean polling = true;
    private Thread poller;

    /**
     * @param perSecond markers per second (e.g. 20)
     */
    FreshnessProbe(String bootstrapServers, String registryUrl, String topic, int readPort, String runId, int perSecond) {
        this.topic = topic;
        this.customer = "probe-" + runId;
        this.interval = Duration.ofNanos(1_000_000_000L / perSecond);
        long hour = eventTime.getEpochSecond() / 3600;
        this.bucketUri = URI.create("http://127.0.0.1:" + readPort + "/v1/buckets/" + enc(DOMAIN + "|" + customer) + "/"
                + enc(GRADE + "|hour|" + hour));
        this.producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 0), new StringSerializer(), new ByteArraySerializer());
        this.serializer = new AvroSerializer<>(new SchemaRegistryClient(registryUrl));
        this.serializer.configure(Map.of(), false);
    }

    FreshnessProbe start() {
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
                if (r.statusCode() == 200) {
                    JsonNode doc = JSON.readTree(r.body());
                    long count = doc.path("count").asLong();
                    synchronized (this) {
                        while (visible.size() < Math.min(count, produced.size())) visible.add(now);
                    }
                }
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
        for (int i = 0; i < produced.size(); i++) out.add(new Marker(produced.get(i), i < visible.size() ? visible.get(i) : 0));
        return out;
    }

    /** Markers sent in [fromNanos, toNanos). */
    List<Marker> markersSentBetween(long fromNanos, long toNanos) {
        return markers().stream().filter(m -> m.producedNanos() >= fromNanos && m.producedNanos() < toNanos).toList();
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
        producer.close(Duration.ofSeconds(5));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
