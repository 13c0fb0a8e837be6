package io.tally.testsupport.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.Deserializer;
import io.tally.schemas.topics.TopicProvisioner;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;

/**
 * One Kafka broker per test JVM, found in this order: {@code KAFKA_BOOTSTRAP_SERVERS} when set (for
 * example the broker of {@code ./tally stack up}); a Testcontainers broker when Docker answers; else
 * an in-process single-node KRaft cluster ({@link KafkaClusterTestKit}).
 */
public final class TestKafka {
    private static final Logger log = LoggerFactory.getLogger(TestKafka.class);
    /** Image for machines with Docker; override with TALLY_TEST_KAFKA_IMAGE. */
    static final String DEFAULT_IMAGE = "apache/kafka:4.1.1";

    private static TestKafka instance;

    private final String bootstrapServers;
    private final String origin;

    private TestKafka(String bootstrapServers, String origin) {
        this.bootstrapServers = bootstrapServers;
        this.origin = origin;
    }

    public static synchronized TestKafka get() {
        if (instance == null) instance = start();
        return instance;
    }

    public String bootstrapServers() { return bootstrapServers; }

    /** Where the broker came from: environment, testcontainers or in-process. */
    public String origin() { return origin; }

    private static TestKafka start() {
        String fromEnv = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
        if (fromEnv != null && !fromEnv.isBlank()) {
            log.info("tests use the Kafka broker at {} (KAFKA_BOOTSTRAP_SERVERS)", fromEnv);
            return new TestKafka(fromEnv, "environment");
        }
        if (dockerAvailable()) {
            String image = System.getenv().getOrDefault("TALLY_TEST_KAFKA_IMAGE", DEFAULT_IMAGE);
            KafkaContainer container = new KafkaContainer(image);
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "test-kafka-stop"));
            return new TestKafka(container.getBootstrapServers(), "testcontainers " + image);
        }
        return startInProcess();
    }

    private static boolean dockerAvailable() {
        // Without a socket or DOCKER_HOST, skip Testcontainers' probe: it logs an alarming error before saying no.
        if (System.getenv("DOCKER_HOST") == null && !java.nio.file.Files.exists(java.nio.file.Path.of("/var/run/docker.sock"))) {
            return false;
        }
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (Throwable e) { // no Docker socket at all: Testcontainers throws rather than answering false
            return false;
        }
    }

    private static TestKafka startInProcess() {
        try {
            KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                    .setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
                    // Single node: every internal topic must fit on one replica.
                    .setConfigProp("offsets.topic.replication.factor", "1")
                    .setConfigProp("transaction.state.log.replication.factor", "1")
                    .setConfigProp("transaction.state.log.min.isr", "1")
                    .setConfigProp("share.coordinator.state.topic.replication.factor", "1")
                    .setConfigProp("auto.create.topics.enable", "false")
                    .setConfigProp("group.initial.rebalance.delay.ms", "0")
                    .build();
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
            // Kafka 4.3.1's default transaction.version=2 makes exactly-once Streams producers fail again and
            // again with OutOfOrderSequenceException on internal topics (docs/aggregation.md, Kafka version).
            try (Admin admin = cluster.admin()) {
                admin.updateFeatures(Map.of("transaction.version", new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)),
                        new UpdateFeaturesOptions()).all().get();
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    cluster.close();
                } catch (Exception e) {
                    log.warn("in-process Kafka did not close cleanly", e);
                }
            }, "test-kafka-stop"));
            log.info("tests use an in-process Kafka broker at {}", cluster.bootstrapServers());
            return new TestKafka(cluster.bootstrapServers(), "in-process");
        } catch (Exception e) {
            throw new IllegalStateException("Cannot start the in-process Kafka broker", e);
        }
    }

    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        return Admin.create(p);
    }

    /**
     * Creates the topics if missing and waits until every partition has a leader: an idempotent
     * producer that writes before that can lose a batch (KAFKA-15591).
     */
    public void createTopics(List<NewTopic> topics) {
        try (Admin admin = admin()) {
            for (NewTopic t : topics) {
                try {
                    admin.createTopics(List.of(t)).all().get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) throw e;
                }
            }
            new TopicProvisioner(admin).awaitLeaders(topics.stream().map(NewTopic::name).toList(), Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Cannot create topics " + topics, e.getCause());
        }
    }

    public static NewTopic topic(String name, int partitions, Map<String, String> configs) {
        return new NewTopic(name, partitions, (short) 1).configs(configs);
    }

    /**
     * Every committed record of {@code topic}, from the beginning to its end as of the call (reading stops after a
     * minute whatever it has): what a test compares with its expectation once the producers are done.
     */
    public static <K, V> List<ConsumerRecord<K, V>> readCommitted(String bootstrapServers, String topic,
                                                                   Deserializer<K> keys, Deserializer<V> values) {
        return readCommitted(bootstrapServers, Map.of(), topic, keys, values);
    }

    /** As {@link #readCommitted(String, String, Deserializer, Deserializer)}, with client settings added (security). */
    public static <K, V> List<ConsumerRecord<K, V>> readCommitted(String bootstrapServers, Map<String, String> clientSettings,
                                                                   String topic, Deserializer<K> keys, Deserializer<V> values) {
        List<ConsumerRecord<K, V>> out = new java.util.ArrayList<>();
        Map<String, Object> config = new java.util.HashMap<>(clientSettings);
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<K, V> c = new KafkaConsumer<>(config, keys, values)) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp)) && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }
}
