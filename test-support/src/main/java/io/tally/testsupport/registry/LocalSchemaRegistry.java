package io.tally.testsupport.registry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import io.tally.testsupport.process.Processes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Confluent-compatible schema registry for tests, one per test JVM: AxonOps Schema Registry, the version
 * pinned in {@code local/schema-registry/go.mod}, with in-memory storage and BACKWARD default compatibility
 * ({@code local/schema-registry/config.yaml}).
 *
 * <p>Found in this order: {@code SCHEMA_REGISTRY_URL} when set (nothing is started, nothing is cleaned up:
 * subjects of earlier runs stay there); else the binary is built if needed by
 * {@code local/schema-registry/build.sh} (~2 min the first time on a machine, then instant), started on a
 * free loopback port, and stopped when the JVM exits. Every JVM that starts one gets an empty registry, so
 * schema ids start at 1 and subjects of other test JVMs are not visible.
 *
 * <p>Thread-safe: {@link #get()} is synchronized; the instance is immutable.
 */
public final class LocalSchemaRegistry {
    private static final Logger log = LoggerFactory.getLogger(LocalSchemaRegistry.class);

    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);
    /** A free port can be taken by someone else between probing and binding; try a new one that often. */
    private static final int START_ATTEMPTS = 3;

    private static LocalSchemaRegistry instance;

    private final String url;
    private final OptionalLong pid;
    private final String origin;

    private LocalSchemaRegistry(String url, OptionalLong pid, String origin) {
        this.url = url;
        this.pid = pid;
        this.origin = origin;
    }

    /** The registry of this JVM, started on first use. */
    public static synchronized LocalSchemaRegistry get() {
        if (instance == null) {
            instance = locateOrStart();
            log.info("tests use the schema registry {} ({})", instance.url, instance.origin);
        }
        return instance;
    }

    /** Base URL without a trailing slash, e.g. {@code http://127.0.0.1:41234}. */
    public String url() { return url; }

    /** Process id of the registry when this JVM started it. */
    public OptionalLong pid() { return pid; }

    /** Where the registry came from: SCHEMA_REGISTRY_URL or started here. */
    public String origin() { return origin; }

    /** The repository root (see {@link Processes#repoRoot()}). */
    public static Path repoRoot() {
        return Processes.repoRoot();
    }

    private static LocalSchemaRegistry locateOrStart() {
        String fromEnv = System.getenv("SCHEMA_REGISTRY_URL");
        if (fromEnv != null && !fromEnv.isBlank()) {
            String url = fromEnv.strip().replaceAll("/+$", "");
            return new LocalSchemaRegistry(url, OptionalLong.empty(), "SCHEMA_REGISTRY_URL");
        }
        Path root = repoRoot();
        Path state = stateDir(root);
        Path binary = build(root, state);
        IllegalStateException last = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
            try {
                return start(root, state, binary, freePort());
            } catch (PortTakenException e) {
                last = e;
                log.debug("schema registry port was taken before it could bind (attempt {}): {}", attempt, e.getMessage());
            }
        }
        throw last;
    }

    private static Path stateDir(Path root) {
        String dir = System.getenv("TALLY_STATE_DIR");
        return dir != null && !dir.isBlank() ? Paths.get(dir) : root.resolve(".tally");
    }

    /**
     * The registry binary the tests run, built first if needed: for a test that starts the local stack's registry
     * in a state directory of its own, which copies it there instead of building it again (~2 min).
     */
    public static Path binary() {
        Path root = repoRoot();
        return build(root, stateDir(root));
    }

    /** Runs build.sh, which returns at once when the binary is newer than go.mod/go.sum. */
    private static Path build(Path root, Path state) {
        Path binary = state.resolve("bin/schema-registry");
        Path logFile = state.resolve("logs/test-registry-build.log");
        Path script = root.resolve("local/schema-registry/build.sh");
        try {
            Files.createDirectories(logFile.getParent());
            Process p = new ProcessBuilder("bash", script.toString(), binary.toString())
                    .directory(root.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(logFile.toFile())
                    .start();
            if (!p.waitFor(BUILD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(script + " did not finish within " + BUILD_TIMEOUT.toMinutes()
                        + " min; log " + logFile + ":\n" + Processes.tail(logFile));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(script + " failed with code " + p.exitValue() + " (Go >= 1.22 is "
                        + "needed to build the schema registry); log " + logFile + ":\n" + Processes.tail(logFile));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script + " (is bash on PATH?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while building the schema registry", e);
        }
        if (!Files.isExecutable(binary)) {
            throw new IllegalStateException(script + " succeeded but " + binary + " is missing; log " + logFile);
        }
        return binary;
    }

    private static LocalSchemaRegistry start(Path root, Path state, Path binary, int port) {
        Path logFile = state.resolve("logs/test-registry-" + ProcessHandle.current().pid() + ".log");
        Process process;
        try {
            ProcessBuilder pb = new ProcessBuilder(binary.toString(),
                    "-config", root.resolve("local/schema-registry/config.yaml").toString())
                    .directory(root.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(logFile.toFile());
            // The registry reads SCHEMA_REGISTRY_* overrides (storage type, database, auth, ...); a developer's
            // shell must not point a test registry at a real database.
            Map<String, String> env = pb.environment();
            env.keySet().removeIf(k -> k.startsWith("SCHEMA_REGISTRY_"));
            env.put("SCHEMA_REGISTRY_HOST", "127.0.0.1");
            env.put("SCHEMA_REGISTRY_PORT", Integer.toString(port));
            process = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the schema registry " + binary, e);
        }
        Thread hook = new Thread(() -> stop(process), "local-schema-registry-stop");
        Runtime.getRuntime().addShutdownHook(hook);

        String url = "http://127.0.0.1:" + port;
        try {
            awaitReady(process, URI.create(url + "/health/ready"), logFile);
        } catch (RuntimeException e) {
            stop(process);
            Runtime.getRuntime().removeShutdownHook(hook);
            throw e;
        }
        return new LocalSchemaRegistry(url, OptionalLong.of(process.pid()),
                "started here, pid " + process.pid() + ", log " + logFile);
    }

    /**
     * A registry of the caller's own, as a managed one is reached: HTTPS with the certificate and key in the given PEM
     * files, and HTTP basic auth for one user (the registry's bootstrap admin, created at start in its in-memory
     * store). {@code trust} must trust the certificate (for the readiness probe). Stopped when the JVM exits.
     */
    public static LocalSchemaRegistry startSecure(Path dir, Path certPem, Path keyPem, String user, String password,
                                                  javax.net.ssl.SSLContext trust) {
        Path root = repoRoot();
        Path binary = build(root, stateDir(root));
        int port = freePort();
        Path config = dir.resolve("registry-secure.yaml");
        Path logFile = dir.resolve("registry-secure.log");
        try {
            Files.createDirectories(dir);
            Files.writeString(config, String.join("\n",
                    "server: {host: 127.0.0.1, port: " + port + "}",
                    "storage: {type: memory}",
                    "compatibility: {default_level: BACKWARD}",
                    "logging: {level: info, format: json}",
                    "security:",
                    "  tls: {enabled: true, cert_file: \"" + certPem + "\", key_file: \"" + keyPem + "\", min_version: TLS1.2, client_auth: none}",
                    "  auth:",
                    "    enabled: true",
                    "    methods: [basic]",
                    "    bootstrap: {enabled: true, username: \"" + user + "\"}",
                    ""));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + config, e);
        }
        Process process;
        try {
            ProcessBuilder pb = new ProcessBuilder(binary.toString(), "-config", config.toString())
                    .directory(root.toFile()).redirectErrorStream(true).redirectOutput(logFile.toFile());
            Map<String, String> env = pb.environment();
            env.keySet().removeIf(k -> k.startsWith("SCHEMA_REGISTRY_"));
            env.put("SCHEMA_REGISTRY_BOOTSTRAP_PASSWORD", password); // the registry ignores a password in its file
            process = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the schema registry " + binary, e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(process), "local-schema-registry-secure-stop"));
        String url = "https://127.0.0.1:" + port;
        awaitReady(process, URI.create(url + "/health/ready"), logFile,
                HttpClient.newBuilder().sslContext(trust).connectTimeout(Duration.ofSeconds(1)).build());
        return new LocalSchemaRegistry(url, OptionalLong.of(process.pid()), "started here over HTTPS, pid " + process.pid() + ", log " + logFile);
    }

    private static void awaitReady(Process process, URI health, Path logFile) {
        awaitReady(process, health, logFile, HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build());
    }

    private static void awaitReady(Process process, URI health, Path logFile, HttpClient http) {
        HttpRequest request = HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(2)).GET().build();
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                String tail = Processes.tail(logFile);
                String message = "the schema registry exited with code " + process.exitValue()
                        + " before it was ready; log " + logFile + ":\n" + tail;
                if (tail.contains("address already in use")) throw new PortTakenException(message);
                throw new IllegalStateException(message);
            }
            try {
                if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) return;
            } catch (IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the schema registry", e);
            }
            Processes.sleep(50, "the schema registry");
        }
        throw new IllegalStateException("the schema registry did not answer " + health + " with 200 within "
                + READY_TIMEOUT.toSeconds() + " s; log " + logFile + ":\n" + Processes.tail(logFile));
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port on 127.0.0.1", e);
        }
    }

    private static void stop(Process process) {
        if (!process.isAlive()) return;
        process.destroy(); // SIGTERM: the registry shuts its HTTP server down and exits 0
        try {
            if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** The probed free port was bound by another process first; {@link #locateOrStart()} retries. */
    private static final class PortTakenException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        PortTakenException(String message) {
            super(message);
        }
    }
}
