package io.tally.schemas.serde;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * A FAULT STUB, not a registry: a JDK HttpServer that answers every request with one canned failure
 * (a status, a body, optionally after a delay). It exists because a real registry cannot be made to
 * fail on demand; everything about real registry behaviour is tested against the real one in
 * tests/…/serde/*IT. It records each request's method, path and Authorization header.
 */
final class RegistryFaultStub implements AutoCloseable {
    record Seen(String method, String path, String authorization) {}

    private final HttpServer server;
    private final List<Seen> seen = new CopyOnWriteArrayList<>();

    private RegistryFaultStub(int status, String contentType, String body, Duration delay) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "registry-fault-stub");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", exchange -> {
            seen.add(new Seen(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
                    exchange.getRequestHeaders().getFirst("Authorization")));
            exchange.getRequestBody().readAllBytes();
            try {
                Thread.sleep(delay.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", contentType);
            try {
                exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
                if (bytes.length > 0) exchange.getResponseBody().write(bytes);
            } catch (IOException clientGaveUp) {
                // the client timed out first; that is what a delay test wants
            } finally {
                exchange.close();
            }
        });
        server.start();
    }

    /** Answers every request with {@code status} and a body. */
    static RegistryFaultStub answering(int status, String contentType, String body) {
        return new RegistryFaultStub(status, contentType, body, Duration.ZERO);
    }

    /** Answers every request only after {@code delay} (longer than the client's timeout, to test timeouts). */
    static RegistryFaultStub slow(Duration delay) {
        return new RegistryFaultStub(500, "text/plain", "too late", delay);
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    List<Seen> seen() { return List.copyOf(seen); }

    @Override
    public void close() {
        server.stop(0);
    }
}
