package io.tally.read;

import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.CosmosException;
import com.azure.cosmos.models.PartitionKey;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.tally.model.BucketDocument;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The HTTP routes. All non-blocking: Cosmos calls return Monos that reactor-netty subscribes to on
 * its event loop.
 *
 * <ul>
 *   <li>{@code GET /v1/buckets/{pk}/{id}}: one bucket by point read (pk and id URL-encoded);
 *       200 with the document, 404 when absent.</li>
 *   <li>{@code GET /health/live}: 200 while the process runs.</li>
 * </ul>
 */
final class BucketRoutes {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final CosmosAsyncContainer container;

    BucketRoutes(CosmosAsyncContainer container) {
        this.container = container;
    }

    void register(HttpServerRoutes routes) {
        routes.get("/v1/buckets/{pk}/{id}", this::pointRead)
              .get("/health/live", (req, res) -> json(res, HttpResponseStatus.OK, JSON.createObjectNode().put("status", "UP")));
    }

    private Publisher<Void> pointRead(HttpServerRequest req, HttpServerResponse res) {
        String pk = URLDecoder.decode(req.param("pk"), StandardCharsets.UTF_8);
        String id = URLDecoder.decode(req.param("id"), StandardCharsets.UTF_8);
        return container.readItem(id, new PartitionKey(pk), BucketDocument.class)
                .flatMap(r -> json(res, HttpResponseStatus.OK, JSON.valueToTree(r.getItem())).then())
                .onErrorResume(CosmosException.class, e -> e.getStatusCode() == 404
                        ? problem(res, HttpResponseStatus.NOT_FOUND, "Bucket not found", "No bucket " + id + " in partition " + pk)
                        : problem(res, HttpResponseStatus.BAD_GATEWAY, "Cosmos error", "Cosmos answered " + e.getStatusCode()));
    }

    private static Mono<Void> json(HttpServerResponse res, HttpResponseStatus status, Object body) {
        return res.status(status).header("Content-Type", "application/json")
                .sendString(Mono.fromCallable(() -> JSON.writeValueAsString(body))).then();
    }

    /** RFC 9457 problem details. */
    private static Mono<Void> problem(HttpServerResponse res, HttpResponseStatus status, String title, String detail) {
        ObjectNode body = JSON.createObjectNode().put("type", "about:blank").put("title", title)
                .put("status", status.code()).put("detail", detail);
        return res.status(status).header("Content-Type", "application/problem+json")
                .sendString(Mono.just(body.toString())).then();
    }
}
