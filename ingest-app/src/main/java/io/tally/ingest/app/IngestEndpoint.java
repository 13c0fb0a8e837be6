package io.tally.ingest.app;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * ingest-app's operations endpoint on {@code sink.metrics.port}, whatever the role: {@code GET /metrics} (Prometheus
 * text: Kafka Streams' metrics, the stream-thread restarts, the sink's), {@code GET /health/live} (200 while the
 * process runs) and {@code GET /health/ready} (200 or 503 with the checks, {@link IngestHealth}). Served by the JDK's
 * HTTP server on one daemon thread: a scrape or probe every few seconds needs no more.
 */
final class IngestEndpoint implements AutoCloseable {
    private final HttpServer server;

    IngestEndpoint(PrometheusMeterRegistry registry, int port, Supplier<IngestHealth.Report> health) {
        try {
            server = HttpServer.create(new InetSocketAddress(port), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on sink.metrics.port " + port, e);
        }
        server.createContext("/metrics", ex -> send(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
        server.createContext("/health/live", ex -> send(ex, 200, "application/json", "{\"status\":\"UP\"}"));
        server.createContext("/health/ready", ex -> {
            IngestHealth.Report r = health.get();
            send(ex, r.ready() ? 200 : 503, "application/json", r.json());
        });
        server.start();
    }

    private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
