package io.tally.testsupport.kafka;

import io.tally.testsupport.process.ChildJvm;
import io.tally.testsupport.process.Ports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * A single-node KRaft broker (broker and controller in one process) in its own JVM, for tests that
 * stop the broker and start it again on the same log directory: the shared {@link TestKafka} cannot
 * be restarted. Configured as {@code local/kafka/server.properties.template} is, on fixed free ports
 * chosen once, so clients reconnect to the same address after a restart, and formatted with
 * {@code transaction.version=1} for the reason {@link TestKafka} gives.
 *
 * <p>Costs ~330 MB and 3–5 s per start; use it only where the restart is the point of the test.
 */
public final class KafkaBrokerProcess implements AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

    private final Path dir;
    private final Path config;
    private final Path log;
    private final int port;
    private ChildJvm process;

    private KafkaBrokerProcess(Path dir, int port, int controllerPort) {
        this.dir = dir;
        this.port = port;
        this.config = dir.resolve("server.properties");
        this.log = dir.resolve("broker.log");
        try {
            Files.createDirectories(dir);
            Files.writeString(config, properties(port, controllerPort, dir.resolve("data")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + config, e);
        }
    }

    /** Formats a fresh log directory under {@code dir}, starts the broker and waits until it answers. */
    public static KafkaBrokerProcess start(Path dir) {
        KafkaBrokerProcess broker = new KafkaBrokerProcess(dir, Ports.free(), Ports.free());
        broker.format();
        broker.start();
        return broker;
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    /** Starts the broker (again) on its log directory and waits until it answers metadata requests. */
    public synchronized void start() {
        if (process != null && process.isAlive()) throw new IllegalStateException("the broker is running");
        process = ChildJvm.start("kafka.Kafka", List.of("-Xms256m"), List.of(config.toString()), Map.of(), log);
        awaitReady();
    }

    /** SIGTERM: a controlled shutdown, as a rolling restart does it. */
    public synchronized void stop() {
        process.stop(Duration.ofSeconds(60));
    }

    /** SIGKILL: the broker dies without flushing; recovery on the next start checks the logs. */
    public synchronized void kill() {
        process.kill();
    }

    public String logTail() {
        return io.tally.testsupport.process.Processes.tail(log);
    }

    private void format() {
        // 16 random bytes, base64url without padding, as `kafka-storage random-uuid` makes them; a leading
        // '-' would read as an option, so such ids are drawn again.
        String clusterId;
        do {
            UUID u = UUID.randomUUID();
            ByteBuffer b = ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits());
            clusterId = Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
        } while (clusterId.startsWith("-"));
        ChildJvm tool = ChildJvm.start("kafka.tools.StorageTool", List.of(),
                List.of("format", "-t", clusterId, "-c", config.toString(), "--feature", "transaction.version=1"), Map.of(), log);
        OptionalInt exit = tool.awaitExit(Duration.ofSeconds(60));
        if (exit.isEmpty() || exit.getAsInt() != 0) {
            tool.close();
            throw new IllegalStateException("formatting " + dir + " failed (exit " + exit + ")\n" + tool.logTail());
        }
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000))) {
            while (System.nanoTime() < deadline) {
                if (!process.isAlive()) throw new IllegalStateException("the broker exited at start\n" + logTail());
                try {
                    if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) return;
                } catch (Exception e) {
                    // not up yet
                }
                Thread.sleep(200);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new IllegalStateException("the broker did not answer within " + READY_TIMEOUT + "\n" + logTail());
    }

    private static String properties(int port, int controllerPort, Path data) {
        return String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "controller.listener.names=CONTROLLER",
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + data,
                "auto.create.topics.enable=false",
                "num.partitions=1",
                "default.replication.factor=1",
                "min.insync.replicas=1",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=5",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "transaction.state.log.num.partitions=5",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                "");
    }

    @Override
    public synchronized void close() {
        if (process != null) process.close();
    }
}
