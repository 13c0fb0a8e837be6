package io.tally.testsupport.cosmos;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosClientBuilder;
import com.azure.cosmos.GatewayConnectionConfig;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import io.tally.testsupport.process.Processes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local Cosmos DB endpoint ({@code local/cosmos}) for tests, one per test JVM.
 *
 * <p>Found in this order: {@code TALLY_COSMOS_ENDPOINT} when set (nothing is started; the control
 * endpoint is {@code TALLY_COSMOS_CONTROL_URL}, default {@code http://127.0.0.1:8082}); an endpoint
 * already answering on the default control port (for example the one of {@code local/stack.sh up});
 * else a node process started here on free ports, destroyed when the JVM exits. Before handing out
 * anything it points {@code javax.net.ssl.trustStore*} at the endpoint's generated PKCS12 truststore,
 * so every client built afterwards trusts the endpoint's certificate.
 *
 * <p>Thread-safe: {@link #get()} and {@link #asyncClient()} are synchronized, everything else is immutable.
 */
public final class LocalCosmos {
    private static final Logger log = LoggerFactory.getLogger(LocalCosmos.class);

    /** The Cosmos emulator's well-known master key; the local endpoint accepts any key. */
    public static final String EMULATOR_KEY =
            "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
    public static final String TRUSTSTORE_PASSWORD = "changeit";

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration NPM_CI_TIMEOUT = Duration.ofMinutes(5);
    private static final Pattern READY_LINE =
            Pattern.compile("^tally-cosmos ready (https://\\S+) control (http://\\S+)\\s*$", Pattern.MULTILINE);

    private static LocalCosmos instance;

    private final String endpoint;
    private final URI controlEndpoint;
    private final Optional<Path> truststore;
    private final OptionalLong pid;
    private final String origin;
    private CosmosAsyncClient sharedClient;

    private LocalCosmos(String endpoint, URI controlEndpoint, Optional<Path> truststore, OptionalLong pid, String origin) {
        this.endpoint = endpoint;
        this.controlEndpoint = controlEndpoint;
        this.truststore = truststore;
        this.pid = pid;
        this.origin = origin;
    }

    /** The endpoint of this JVM, started on first use. */
    public static synchronized LocalCosmos get() {
        if (instance == null) {
            instance = locateOrStart();
            instance = instance.withTruststore(instance.truststore.map(LocalCosmos::trust));
            log.info("tests use the Cosmos endpoint {} (control {}, {})", instance.endpoint, instance.controlEndpoint, instance.origin);
        }
        return instance;
    }

    /**
     * Starts an endpoint process for the caller alone, whatever else is running (benchmarks must not
     * share the machine's stack endpoint). Destroyed when the JVM exits.
     */
    public static synchronized LocalCosmos startPrivate() {
        LocalCosmos started = start();
        return started.withTruststore(started.truststore.map(LocalCosmos::trust));
    }

    /** HTTPS endpoint for {@link CosmosClientBuilder#endpoint(String)}. */
    public String endpoint() { return endpoint; }

    /** Base URL of the plain-HTTP control endpoint. */
    public URI controlEndpoint() { return controlEndpoint; }

    /** A client for the control endpoint (faults, throughput, stats). */
    public CosmosControl control() { return new CosmosControl(controlEndpoint); }

    /** Process id of the node process when this JVM started it. */
    public OptionalLong pid() { return pid; }

    /** Where the endpoint came from: environment, already running, or started here. */
    public String origin() { return origin; }

    /**
     * A builder with the settings that work against the local endpoint: Gateway mode, no endpoint
     * discovery (there is one region and its address is the one we were given), the emulator key.
     * Callers may change anything else (retry options, content response on write, ...).
     */
    public CosmosClientBuilder clientBuilder() {
        return new CosmosClientBuilder()
                .endpoint(endpoint)
                .key(EMULATOR_KEY)
                .gatewayMode(new GatewayConnectionConfig())
                .endpointDiscoveryEnabled(false);
    }

    /**
     * An SSLContext trusting the endpoint, for plain HTTPS clients (java.net.http). The JVM's default
     * context may have been created before the truststore properties were set, and then ignores them.
     */
    public javax.net.ssl.SSLContext sslContext() {
        Path store = truststore.orElseThrow(() -> new IllegalStateException("no truststore known for " + endpoint));
        try (var in = Files.newInputStream(store)) {
            java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
            ks.load(in, TRUSTSTORE_PASSWORD.toCharArray());
            javax.net.ssl.TrustManagerFactory tmf =
                    javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new IllegalStateException("cannot load the Cosmos truststore " + store, e);
        }
    }

    /** A new async client; the caller closes it. */
    public CosmosAsyncClient newAsyncClient() {
        return clientBuilder().buildAsyncClient();
    }

    /** One async client shared by the callers of this instance, closed when the JVM exits. */
    public synchronized CosmosAsyncClient asyncClient() {
        if (sharedClient == null) {
            CosmosAsyncClient c = newAsyncClient();
            Runtime.getRuntime().addShutdownHook(new Thread(c::close, "local-cosmos-client-close"));
            sharedClient = c;
        }
        return sharedClient;
    }

    // The JVM re-reads the truststore file whenever a client builds its TLS context; a private copy
    // keeps working when the shared TLS directory is cleaned while tests run.
    private static Path trust(Path truststore) {
        Path copy;
        try {
            copy = Files.createTempFile("tally-cosmos-truststore-", ".p12");
            Files.copy(truststore, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            copy.toFile().deleteOnExit();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy the Cosmos truststore " + truststore, e);
        }
        System.setProperty("javax.net.ssl.trustStore", copy.toString());
        System.setProperty("javax.net.ssl.trustStorePassword", TRUSTSTORE_PASSWORD);
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
        return copy;
    }

    private LocalCosmos withTruststore(Optional<Path> store) {
        return new LocalCosmos(endpoint, controlEndpoint, store, pid, origin);
    }

    private static LocalCosmos locateOrStart() {
        String fromEnv = System.getenv("TALLY_COSMOS_ENDPOINT");
        if (fromEnv != null && !fromEnv.isBlank()) {
            URI control = URI.create(envOr("TALLY_COSMOS_CONTROL_URL", "http://127.0.0.1:" + envOr("TALLY_COSMOS_CONTROL_PORT", "8082")));
            Optional<Path> truststore = defaultTruststore();
            return new LocalCosmos(fromEnv, control, truststore, OptionalLong.empty(), "TALLY_COSMOS_ENDPOINT");
        }
        URI defaultControl = URI.create("http://127.0.0.1:" + envOr("TALLY_COSMOS_CONTROL_PORT", "8082"));
        Optional<JsonNode> health = new CosmosControl(defaultControl).tryHealth(Duration.ofMillis(500));
        if (health.isPresent() && health.get().hasNonNull("cosmosEndpoint")) {
            JsonNode h = health.get();
            Optional<Path> truststore = h.hasNonNull("truststore")
                    ? Optional.of(Paths.get(h.get("truststore").asText())).filter(Files::isRegularFile)
                    : defaultTruststore();
            return new LocalCosmos(h.get("cosmosEndpoint").asText(), defaultControl, truststore, OptionalLong.empty(),
                    "already running, pid " + h.path("pid").asText("?"));
        }
        return start();
    }

    private static Optional<Path> defaultTruststore() {
        String dir = System.getenv("TALLY_COSMOS_TLS_DIR");
        Path tlsDir = dir != null && !dir.isBlank() ? Paths.get(dir) : repoRoot().resolve(".tally/cosmos/tls");
        return Optional.of(tlsDir.resolve("truststore.p12")).filter(Files::isRegularFile);
    }

    private static String envOr(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

    /** The repository root (see {@link Processes#repoRoot()}). */
    public static Path repoRoot() {
        return Processes.repoRoot();
    }

    private static LocalCosmos start() {
        Path root = repoRoot();
        Path cosmosDir = root.resolve("local/cosmos");
        String node = envOr("TALLY_NODE", "node");
        if (!Files.isDirectory(cosmosDir.resolve("node_modules"))) {
            log.info("installing the local Cosmos endpoint's packages (npm ci in {})", cosmosDir);
            Processes.npmCiIfMissing(cosmosDir, "node_modules", root.resolve(".tally/logs/test-cosmos-npm-ci.log"), NPM_CI_TIMEOUT);
        }

        Path logFile = root.resolve(".tally/logs/test-cosmos-" + ProcessHandle.current().pid() + ".log");
        Process process;
        try {
            Files.createDirectories(logFile.getParent());
            ProcessBuilder pb = new ProcessBuilder(node, cosmosDir.resolve("bin/tally-cosmos.js").toString(),
                    "--host", "127.0.0.1", "--port", "0", "--control-port", "0")
                    .directory(cosmosDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(logFile.toFile());
            // The ports and the TLS directory come from the flags and the default; the environment of a
            // developer's shell must not move them.
            pb.environment().remove("TALLY_COSMOS_PORT");
            pb.environment().remove("TALLY_COSMOS_CONTROL_PORT");
            pb.environment().remove("TALLY_COSMOS_HOST");
            process = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the local Cosmos endpoint with '" + node
                    + "' (is Node.js >= 20 installed and on PATH, or TALLY_NODE set?)", e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop(process);
            // A clean stop leaves nothing worth reading; a crash keeps its log.
            if (!process.isAlive() && process.exitValue() == 0) logFile.toFile().delete();
        }, "local-cosmos-stop"));

        Matcher ready = awaitReadyLine(process, logFile);
        URI control = URI.create(ready.group(2));
        // The endpoint reports the truststore it generated (it honours TALLY_COSMOS_TLS_DIR).
        Path truststore = new CosmosControl(control).tryHealth(Duration.ofSeconds(5))
                .filter(h -> h.hasNonNull("truststore"))
                .map(h -> Paths.get(h.get("truststore").asText()))
                .orElseGet(() -> root.resolve(".tally/cosmos/tls/truststore.p12"));
        if (!Files.isRegularFile(truststore)) {
            throw new IllegalStateException("the local Cosmos endpoint started but " + truststore
                    + " is missing (keytool not found?)\n" + Processes.tail(logFile));
        }
        return new LocalCosmos(ready.group(1), control, Optional.of(truststore),
                OptionalLong.of(process.pid()), "started here, pid " + process.pid() + ", log " + logFile);
    }

    private static Matcher awaitReadyLine(Process process, Path logFile) {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            String out = Processes.read(logFile);
            Matcher m = READY_LINE.matcher(out);
            if (m.find()) return m;
            if (!process.isAlive()) {
                throw new IllegalStateException("the local Cosmos endpoint exited with code " + process.exitValue()
                        + " before it was ready; log " + logFile + ":\n" + Processes.tail(logFile));
            }
            Processes.sleep(50, "the local Cosmos endpoint");
        }
        stop(process);
        throw new IllegalStateException("the local Cosmos endpoint did not print its ready line within "
                + READY_TIMEOUT.toSeconds() + " s; log " + logFile + ":\n" + Processes.tail(logFile));
    }

    private static void stop(Process process) {
        if (!process.isAlive()) return;
        process.destroy(); // SIGTERM: the endpoint closes its sockets and exits 0
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
