package io.tally.ingest.sink;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * {@code GET /metrics} in the Prometheus text format on {@code sink.metrics.port}, served by the JDK's
 * HTTP server on one daemon thread (a scrape every few seconds needs no more).
 */
public final class MetricsEndpoint implements AutoCloseable {
    private final HttpServer server;

    public MetricsEndpoint(PrometheusMeterRegistry registry, int port) {
        try {
            server = HttpServer.create(new InetSocketAddress(port), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on sink.metrics.port " + port, e);
        }
        server.createContext("/metrics", ex -> {
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    public int port() { return server.getAddress().getPort(); }

    @Override
    public void close() {
        server.stop(0);
    }
}
