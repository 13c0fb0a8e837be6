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
    private final SaslSsl security;
    private ChildJvm process;

    /**
     * The client listener as a managed Kafka offers it: TLS with the certificate in {@code keystorePem} (private key
     * and certificate, PEM), SCRAM-SHA-512 logins for {@code users} (name to password), created at format time, as
     * KRaft needs them before the first inter-broker connection. The controller listener stays plaintext on 127.0.0.1.
     */
    public record SaslSsl(Path keystorePem, Path truststore, String truststorePassword, Map<String, String> users) {
        static final String MECHANISM = "SCRAM-SHA-512";
        static final String BROKER_USER = "broker";

        public SaslSsl {
            Map<String, String> all = new java.util.LinkedHashMap<>(users);
            all.putIfAbsent(BROKER_USER, UUID.randomUUID().toString());
            users = Map.copyOf(all);
        }

        /** What a client sets to log in as {@code user}, with the kafka. prefix stripped. */
        public Map<String, String> clientSettings(String user) {
            String password = users.get(user);
            if (password == null) throw new IllegalArgumentException("no SCRAM user " + user);
            return Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", MECHANISM,
                    "sasl.jaas.config", jaas(user, password),
                    "ssl.truststore.location", truststore.toString(), "ssl.truststore.password", truststorePassword,
                    "ssl.truststore.type", "PKCS12");
        }

        static String jaas(String user, String password) {
            return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                    + "\" password=\"" + password + "\";";
        }
    }

    private KafkaBrokerProcess(Path dir, int port, int controllerPort, SaslSsl security) {
        this.dir = dir;
        this.port = port;
        this.security = security;
        this.config = dir.resolve("server.properties");
        this.log = dir.resolve("broker.log");
        try {
            Files.createDirectories(dir);
            Files.writeString(config, properties(port, controllerPort, dir.resolve("data"), security));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + config, e);
        }
    }

    /** Formats a fresh log directory under {@code dir}, starts the broker and waits until it answers. */
    public static KafkaBrokerProcess start(Path dir) {
        return start(dir, null);
    }

    /** As {@link #start(Path)}, with the client listener on SASL_SSL ({@code security} null: plaintext). */
    public static KafkaBrokerProcess start(Path dir, SaslSsl security) {
        KafkaBrokerProcess broker = new KafkaBrokerProcess(dir, Ports.free(), Ports.free(), security);
        broker.format();
        broker.start();
        return broker;
    }

    /** The admin client's settings: bootstrap servers and, with SASL_SSL, the broker's own login. */
    public Map<String, Object> adminSettings() {
        Map<String, Object> m = new java.util.HashMap<>(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000));
        if (security != null) m.putAll(security.clientSettings(SaslSsl.BROKER_USER));
        return m;
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
        List<String> args = new java.util.ArrayList<>(List.of("format", "-t", clusterId, "-c", config.toString(),
                "--feature", "transaction.version=1"));
        if (security != null) {
            security.users().forEach((user, password) -> args.addAll(List.of("--add-scram",
                    SaslSsl.MECHANISM + "=[name=" + user + ",password=" + password + "]")));
        }
        ChildJvm tool = ChildJvm.start("kafka.tools.StorageTool", List.of(), args, Map.of(), log);
        OptionalInt exit = tool.awaitExit(Duration.ofSeconds(60));
        if (exit.isEmpty() || exit.getAsInt() != 0) {
            tool.close();
            throw new IllegalStateException("formatting " + dir + " failed (exit " + exit + ")\n" + tool.logTail());
        }
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        try (Admin admin = Admin.create(adminSettings())) {
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

    private static String properties(int port, int controllerPort, Path data, SaslSsl security) {
        String listener = security == null ? "PLAINTEXT" : "SASL_SSL";
        List<String> secure = security == null ? List.of() : List.of(
                "sasl.enabled.mechanisms=" + SaslSsl.MECHANISM,
                "sasl.mechanism.inter.broker.protocol=" + SaslSsl.MECHANISM,
                "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config="
                        + SaslSsl.jaas(SaslSsl.BROKER_USER, security.users().get(SaslSsl.BROKER_USER)),
                "ssl.keystore.type=PEM",
                "ssl.keystore.location=" + security.keystorePem(),
                // The broker is its own client on the inter-broker listener: it trusts its certificate too.
                "ssl.truststore.type=PKCS12",
                "ssl.truststore.location=" + security.truststore(),
                "ssl.truststore.password=" + security.truststorePassword());
        return String.join("\n", java.util.stream.Stream.concat(java.util.stream.Stream.of(
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "controller.listener.names=CONTROLLER",
                "listeners=" + listener + "://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=" + listener + "://127.0.0.1:" + port,
                "inter.broker.listener.name=" + listener,
                "listener.security.protocol.map=" + listener + ":" + listener + ",CONTROLLER:PLAINTEXT",
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
                "group.initial.rebalance.delay.ms=0"), secure.stream()).toList()) + "\n";
    }

    @Override
    public synchronized void close() {
        if (process != null) process.close();
    }
}
