package io.tally.tests.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.schemas.DeadLetters;
import io.tally.loadgen.Loadgen;
import io.tally.loadgen.LoadgenSettings;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
import io.tally.schemas.Topics;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import io.tally.tests.ops.ReferencedMetrics;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole path once: loadgen produces Avro events to Kafka, ingest-app aggregates them and writes
 * bucket documents with the Cosmos bulk API, read-service serves them over HTTP. Every customer's
 * hour bucket must equal loadgen's ground truth, and a record that is not Avro lands on the DLQ
 * without stopping the rest. Last, every metric that the Grafana dashboard and the Prometheus rules in deploy/
 * reference must be on the scrape of this running ingest-app or read-service.
 */
@ExtendWith(LocalStackExtension.class)
class WalkingSkeletonIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void eventsBecomeBucketsThatReadServiceServes(TestKafka kafka, LocalSchemaRegistry schemaRegistry, LocalCosmos cosmos,
                                                  @TempDir Path stateDir) throws Exception {
        String registry = schemaRegistry.url();
        String run = UUID.randomUUID().toString().substring(0, 8);
        String transactions = Topics.TRANSACTIONS;
        kafka.createTopics(List.of(
                TestKafka.topic(transactions, 3, Map.of()),
                TestKafka.topic(Topics.TRANSACTIONS_DLQ, 1, Map.of()),
                TestKafka.topic(Topics.BUCKET_UPDATES, 3, Map.of("cleanup.policy", "compact"))));

        String[] cosmosFlags = {"--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=skeleton-" + run};
        int metricsPort = freePort();
        IngestSettings ingestSettings = IngestSettings.load(concat(cosmosFlags,
                "--kafka.bootstrap.servers=" + kafka.bootstrapServers(),
                "--schema.registry.url=" + registry,
                "--ingest.application-id=skeleton-" + run,
                "--sink.group-id=skeleton-sink-" + run,
                "--ingest.state-dir=" + stateDir,
                "--ingest.commit-interval.ms=200",
                "--sink.metrics.port=" + metricsPort), Map.of());
        ReadSettings readSettings = ReadSettings.load(concat(cosmosFlags, "--read.http.port=0"), Map.of());
        // Loadgen sends only valid, unique, APPROVED events, all within the first minute of the current hour, over
        // 4 equally likely customers: then each customer's total is its `spend-per-customer` hour bucket.
        Instant hour = Instant.now().truncatedTo(ChronoUnit.HOURS);
        LoadgenSettings loadgenSettings = LoadgenSettings.load(new String[] {
                "--kafka.bootstrap.servers=" + kafka.bootstrapServers(), "--schema.registry.url=" + registry,
                "--loadgen.events=50", "--loadgen.customers=4", "--loadgen.zipf.exponent=0", "--loadgen.domain=skeleton",
                "--loadgen.start=" + hour, "--loadgen.window.ms=60000",
                "--loadgen.duplicate.fraction=0", "--loadgen.late.fraction=0", "--loadgen.future.fraction=0",
                "--loadgen.malformed.fraction=0", "--loadgen.invalid.fraction=0",
                "--loadgen.declined.fraction=0", "--loadgen.refunded.fraction=0",
                "--loadgen.ground-truth-file=" + Files.createTempDirectory("skeleton-truth").resolve("ground-truth.json")}, Map.of());

        try (IngestApp ingest = new IngestApp(ingestSettings); ReadMain read = new ReadMain(readSettings)) {
            ingest.start();
            read.start();
            byte[] garbage = "{\"not\": \"avro\"}".getBytes(StandardCharsets.UTF_8);
            try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()), new StringSerializer(), new ByteArraySerializer())) {
                producer.send(new ProducerRecord<>(transactions, "c-0", garbage)).get();
            }
            Loadgen.Summary truth = Loadgen.run(loadgenSettings);
            assertThat(truth.acknowledged()).isEqualTo(50);
            assertThat(truth.failed()).isZero();
            assertThat(truth.spendByCustomer()).hasSize(4);

            HttpClient http = HttpClient.newHttpClient();
            long bucket = hour.getEpochSecond() / 3600;
            for (Map.Entry<String, BigDecimal> e : truth.spendByCustomer().entrySet()) {
                URI uri = URI.create("http://127.0.0.1:" + read.port() + "/v1/buckets/"
                        + enc("skeleton|" + e.getKey()) + "/" + enc("spend-per-customer|hour|" + bucket));
                JsonNode doc = awaitBucket(http, uri, e.getValue(), Duration.ofSeconds(60));
                assertThat(doc.get("sum").decimalValue()).as("sum of %s", e.getKey()).isEqualByComparingTo(e.getValue());
                assertThat(doc.get("pk").asText()).isEqualTo("skeleton|" + e.getKey());
            }

            HttpResponse<String> missing = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + read.port()
                    + "/v1/buckets/" + enc("skeleton|nobody") + "/" + enc("spend-per-customer|hour|1"))).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(missing.statusCode()).isEqualTo(404);
            assertThat(missing.headers().firstValue("Content-Type")).hasValue("application/problem+json");

            List<ConsumerRecord<byte[], byte[]>> dead = readAll(kafka, Topics.TRANSACTIONS_DLQ, 1, Duration.ofSeconds(30));
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).value()).isEqualTo(garbage);
            assertThat(new String(dead.get(0).headers().lastHeader(DeadLetters.REASON).value(), StandardCharsets.UTF_8))
                    .isEqualTo("DECODE_FAILED");

            ReferencedMetrics.assertAllExported(() -> Map.of(
                    "ingest-app", scrape(http, "http://127.0.0.1:" + metricsPort + "/metrics"),
                    "read-service", scrape(http, "http://127.0.0.1:" + read.port() + "/metrics")), Duration.ofSeconds(15));
        }
    }

    private static String scrape(HttpClient http, String url) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as("GET %s", url).isEqualTo(200);
            return r.body();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** Polls until the bucket's sum reaches the expected value; returns that document. */
    private static JsonNode awaitBucket(HttpClient http, URI uri, BigDecimal expected, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        JsonNode last = null;
        int lastStatus = -1;
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
            lastStatus = r.statusCode();
            if (r.statusCode() == 200) {
                last = JSON.readTree(r.body());
                if (last.get("sum").decimalValue().compareTo(expected) == 0) return last;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("bucket " + uri + " did not reach sum " + expected + " within " + timeout
                + " (last status " + lastStatus + ", last document " + last + ")");
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(TestKafka kafka, String topic, int expected, Duration timeout) {
        List<ConsumerRecord<byte[], byte[]>> out = new java.util.ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.GROUP_ID_CONFIG, "dlq-reader-" + UUID.randomUUID()), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            consumer.poll(Duration.ofMillis(500)).forEach(out::add); // anything beyond the expected count is a failure too
        }
        return out;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
