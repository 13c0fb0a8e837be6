package io.tally.loadgen;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Just enough of a Confluent-API registry for the encoder: registering a schema under a subject answers an
 * id, one per distinct schema. A client that registered a schema knows its id, so the project's
 * deserializer, given the same client, decodes without asking again.
 */
final class RegistryStub implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpServer server;
    private final Map<String, Integer> ids = new LinkedHashMap<>();
    private final Set<String> subjects = new TreeSet<>();

    RegistryStub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/subjects/", exchange -> {
            String path = exchange.getRequestURI().getRawPath();
            String schema = JSON.readTree(exchange.getRequestBody()).path("schema").asText();
            int id;
            synchronized (this) {
                subjects.add(URLDecoder.decode(path.split("/")[2], StandardCharsets.UTF_8));
                id = ids.computeIfAbsent(schema, s -> ids.size() + 1);
            }
            byte[] body = ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/vnd.schemaregistry.v1+json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    SchemaRegistryClient client() {
        return new SchemaRegistryClient("http://127.0.0.1:" + server.getAddress().getPort());
    }

    synchronized Set<String> subjects() {
        return Set.copyOf(subjects);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
