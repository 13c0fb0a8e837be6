package io.tally.tests.serde;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SchemaRegistryException;
import io.tally.schemas.serde.WireFormat;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The local stack's registry keeps its schemas in PostgreSQL ({@code local/stack.sh}, TALLY_REGISTRY_STORAGE, default
 * postgresql): records produced with v1 and v2 schema ids are all decoded after the registry and its database were
 * stopped and started again, every id still names the same schema, and a schema registered first after the restart
 * gets a new id instead of taking an old one. The in-memory option still runs, and loses everything on a restart.
 * The stack runs in a state directory and on ports of its own; the registry binary is the tests' one, copied.
 */
@ExtendWith(LocalStackExtension.class)
class DurableRegistryIT {
    static final Duration STACK_TIMEOUT = Duration.ofSeconds(180);

    Path state;
    Map<String, String> env;

    @BeforeEach
    void ownStateDirectoryAndPorts() throws IOException {
        // World-readable: as root the stack runs PostgreSQL as the user postgres, which must reach its data directory.
        state = Files.createTempDirectory("tally-durable-registry-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Files.createDirectories(state.resolve("bin"));
        Files.copy(LocalSchemaRegistry.binary(), state.resolve("bin/schema-registry"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.setLastModifiedTime(state.resolve("bin/schema-registry"), java.nio.file.attribute.FileTime.from(java.time.Instant.now()));
        env = new HashMap<>(Map.of("TALLY_STATE_DIR", state.toString(), "TALLY_REGISTRY_PORT", Integer.toString(freePort()),
                "TALLY_POSTGRES_PORT", Integer.toString(freePort())));
    }

    @AfterEach
    void stopAndDelete() throws Exception {
        stack("down");
        try (Stream<Path> all = Files.walk(state)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void recordsProducedBeforeARestartAllDecodeAfterItAndIdsStay(TestKafka kafka) throws Exception {
        stack("up", "registry");
        String url = "http://127.0.0.1:" + env.get("TALLY_REGISTRY_PORT");
        String topic = SerdeFixtures.freshTopic("durable");
        String subject = AvroSerdeConfig.subject(topic, false);
        kafka.createTopics(List.of(TestKafka.topic(topic, 1, Map.of())));

        SchemaRegistryClient before = new SchemaRegistryClient(url);
        AvroSerializer<TransactionEvent> v1 = new AvroSerializer<>(before);
        AvroSerializer<GenericRecord> v2 = new AvroSerializer<>(before);
        List<TransactionEvent> sent = new ArrayList<>();
        Map<Integer, Long> idsSent = new TreeMap<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all"), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 200; i++) {
                TransactionEvent e = SerdeFixtures.events().get(i % 4);
                e = TransactionEvent.newBuilder(e).setTransactionId("tx-" + i).build();
                byte[] bytes = i < 100 ? v1.serialize(topic, e) : v2.serialize(topic, SerdeFixtures.asV2(e, "dev-" + i, "GOLD"));
                idsSent.merge(WireFormat.schemaId(bytes, topic), 1L, Long::sum);
                producer.send(new ProducerRecord<>(topic, bytes)).get();
                sent.add(e);
            }
        }
        assertThat(idsSent).as("records of two schema versions").hasSize(2);
        int id1 = before.register(subject, SerdeFixtures.V1);
        int id2 = before.register(subject, SerdeFixtures.V2);

        stack("down");
        stack("up", "registry");

        SchemaRegistryClient after = new SchemaRegistryClient(url); // nothing cached
        int newcomer = after.register(SerdeFixtures.freshTopic("first-after-restart") + "-value",
                SerdeFixtures.incompatibleWithV1());
        assertThat(newcomer).as("a schema registered first after the restart takes a new id").isNotIn(id1, id2);
        AvroDeserializer<TransactionEvent> reader = new AvroDeserializer<>(after, TransactionEvent.getClassSchema());
        List<ConsumerRecord<byte[], byte[]>> records = TestKafka.readCommitted(kafka.bootstrapServers(), topic,
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
        assertThat(records).hasSize(sent.size());
        for (int i = 0; i < records.size(); i++) {
            assertThat(reader.deserialize(topic, records.get(i).value())).as("record %d after the restart", i).isEqualTo(sent.get(i));
        }
        assertThat(after.register(subject, SerdeFixtures.V1)).as("v1 keeps its id").isEqualTo(id1);
        assertThat(after.register(subject, SerdeFixtures.V2)).as("v2 keeps its id").isEqualTo(id2);
        assertThat(after.latest(subject).version()).isEqualTo(2);
    }

    @Test
    void theInMemoryOptionStillRunsAndForgetsEverythingOnARestart() throws Exception {
        env.put("TALLY_REGISTRY_STORAGE", "memory");
        stack("up", "registry");
        String url = "http://127.0.0.1:" + env.get("TALLY_REGISTRY_PORT");
        String subject = SerdeFixtures.freshTopic("memory") + "-value";
        new SchemaRegistryClient(url).register(subject, SerdeFixtures.V1);
        assertThat(Files.exists(state.resolve("run/postgres.pid"))).as("no PostgreSQL in memory mode").isFalse();
        stack("down");
        stack("up", "registry");
        try {
            new SchemaRegistryClient(url).latest(subject);
            throw new AssertionError("the subject survived a restart of the in-memory registry");
        } catch (SchemaRegistryException e) {
            assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.SUBJECT_NOT_FOUND);
        }
    }

    /** Runs local/stack.sh with this test's state directory and ports; fails with its output unless it succeeds. */
    private void stack(String... args) throws Exception {
        Path root = LocalSchemaRegistry.repoRoot();
        List<String> cmd = new ArrayList<>(List.of("bash", root.resolve("local/stack.sh").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(state.resolve("stack.log").toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(STACK_TIMEOUT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("local/stack.sh " + String.join(" ", args) + " still running after " + STACK_TIMEOUT.toSeconds() + " s");
        }
        assertThat(p.exitValue()).as("local/stack.sh %s:\n%s", String.join(" ", args), Files.readString(state.resolve("stack.log"))).isZero();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
