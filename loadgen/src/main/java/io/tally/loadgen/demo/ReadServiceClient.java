package io.tally.loadgen.demo;

import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/**
 * GETs on read-service for the demo, answers kept as read-service wrote them: numbers are parsed as
 * exact decimals, and the pretty form prints them unchanged, so what the reader sees is what was compared.
 */
final class ReadServiceClient {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .build();
    /** The layout a reader knows from jq: two spaces, one member or element a line, {@code "name": value}. */
    private static final DefaultPrettyPrinter PRETTY = new DefaultPrettyPrinter(Separators.createDefaultInstance()
            .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
            .withObjectEmptySeparator("")
            .withArrayEmptySeparator(""))
            .withArrayIndenter(DefaultIndenter.SYSTEM_LINEFEED_INSTANCE);
    /** A busy machine's read-service may answer 503 or 504 now and then; the demo asks again. */
    private static final int ATTEMPTS = 3;
    private static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

    /** An answer: read-service's body, or the reason there was none; json is empty unless the body is JSON. */
    record Answer(String body, Optional<JsonNode> json) {
        Optional<BigDecimal> number(String field) {
            return json.map(j -> j.get(field)).filter(JsonNode::isNumber).map(JsonNode::decimalValue);
        }

        /** The body pretty-printed; a body that is not JSON (a connection error, say) as it is. */
        String pretty() {
            if (json.isEmpty()) return body;
            try {
                return JSON.writer(PRETTY).writeValueAsString(json.get());
            } catch (IOException e) {
                return body;
            }
        }
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final URI base;

    ReadServiceClient(URI base) {
        this.base = URI.create(base.toString().replaceAll("/+$", ""));
    }

    /** One GET of {@code path} (already URL-encoded), asked again on 503 or 504. */
    Answer get(String path, Duration timeout) throws InterruptedException {
        Answer answer = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            if (attempt > 1) Thread.sleep(RETRY_PAUSE.toMillis());
            HttpRequest request = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout).GET().build();
            int status;
            try {
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                status = response.statusCode();
                answer = new Answer(response.body(), parse(response.body()));
            } catch (IOException e) {
                return new Answer("no answer from " + base + ": " + e, Optional.empty());
            }
            if (status != 503 && status != 504) break;
        }
        return answer;
    }

    static String plain(JsonNode n) {
        return n == null || n.isMissingNode() || n.isNull() ? "?" : n.isNumber() ? n.decimalValue().toPlainString() : n.asText();
    }

    private static Optional<JsonNode> parse(String body) {
        try {
            return Optional.ofNullable(JSON.readTree(body)).filter(n -> n.isContainerNode());
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
