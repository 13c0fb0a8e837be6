package io.tally.tests.serde;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroDeserializer;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.WireFormat;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.process.Processes;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tally's serde against an implementation nobody here wrote: Confluent's Node client
 * ({@code @confluentinc/schemaregistry}, {@code avsc} underneath) in {@code local/compat-node}, through the
 * same registry. Node decodes what Tally encoded, Tally decodes what Node encoded, field by field (decimal
 * amount and timestamp included), and for the same event both produce the same bytes.
 *
 * <p>Runs {@code npm ci} in local/compat-node when node_modules is missing (about 20 s once per machine);
 * then one Node process per test run (about 1 s).
 */
@ExtendWith(LocalStackExtension.class)
class ConfluentNodeCompatibilityIT {
    private static final Duration NPM_CI_TIMEOUT = Duration.ofMinutes(5);
    private static final Duration SCRIPT_TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path compatDir;

    @BeforeAll
    static void installNodePackages() throws IOException {
        compatDir = Processes.repoRoot().resolve("local/compat-node");
        Processes.npmCiIfMissing(compatDir, "node_modules/@confluentinc/schemaregistry",
                Files.createTempFile("tally-compat-npm-ci-", ".log"), NPM_CI_TIMEOUT);
    }

    @Test
    void confluentsNodeClientAndTallyReadEachOthersBytes(LocalSchemaRegistry registry) throws Exception {
        SchemaRegistryClient client = SerdeFixtures.client(registry);
        String topic = SerdeFixtures.freshTopic("node-compat");
        List<TransactionEvent> events = SerdeFixtures.events();
        AvroSerializer<TransactionEvent> serializer = new AvroSerializer<>(client); // registers v1 for Node's latest
        List<byte[]> javaBytes = events.stream().map(e -> serializer.serialize(topic, e)).toList();

        ObjectNode request = JSON.createObjectNode();
        ArrayNode decode = request.putArray("decode");
        ArrayNode encode = request.putArray("encode");
        for (int i = 0; i < events.size(); i++) {
            decode.addObject().put("topic", topic).put("base64", Base64.getEncoder().encodeToString(javaBytes.get(i)));
            encode.addObject().put("topic", topic).set("event", toJson(events.get(i)));
        }
        JsonNode response = runScript(registry.url(), request);

        // (a) Node decodes Tally's bytes.
        JsonNode decoded = response.get("decoded");
        assertThat(decoded).hasSize(events.size());
        for (int i = 0; i < events.size(); i++) {
            JsonNode n = decoded.get(i);
            assertThat(n.has("error")).as("node decode error: %s", n.path("error").asText()).isFalse();
            assertSameEvent(n, events.get(i));
        }

        // (b) Tally decodes Node's bytes, and they are Tally's bytes when the map order cannot differ.
        AvroDeserializer<TransactionEvent> deserializer = new AvroDeserializer<>(client, TransactionEvent.getClassSchema());
        JsonNode encoded = response.get("encoded");
        assertThat(encoded).hasSize(events.size());
        for (int i = 0; i < events.size(); i++) {
            assertThat(encoded.get(i).isTextual()).as("node encode error: %s", encoded.get(i)).isTrue();
            byte[] nodeBytes = Base64.getDecoder().decode(encoded.get(i).asText());
            assertThat(WireFormat.schemaId(nodeBytes, topic)).isEqualTo(WireFormat.schemaId(javaBytes.get(i), topic));
            TransactionEvent back = deserializer.deserialize(topic, 0, i, nodeBytes);
            assertThat(back.getTransactionId()).isEqualTo(events.get(i).getTransactionId());
            assertThat(back.getAmount()).isEqualByComparingTo(events.get(i).getAmount());
            assertThat(back.getAmount().scale()).isEqualTo(4);
            assertThat(back.getEventTime()).isEqualTo(events.get(i).getEventTime());
            assertThat(back.getEmail()).isEqualTo(events.get(i).getEmail());
            assertThat(back.getPostalCode()).isEqualTo(events.get(i).getPostalCode());
            assertThat(back.getAttributes()).isEqualTo(events.get(i).getAttributes());
            assertThat(back).isEqualTo(events.get(i));
            if (events.get(i).getAttributes().size() <= 1) {
                assertThat(nodeBytes).as("event %d bytes", i).isEqualTo(javaBytes.get(i));
            }
        }
    }

    private static void assertSameEvent(JsonNode n, TransactionEvent e) {
        assertThat(n.get("transactionId").asText()).isEqualTo(e.getTransactionId());
        assertThat(Instant.parse(n.get("eventTime").asText())).isEqualTo(e.getEventTime());
        assertThat(n.get("domain").asText()).isEqualTo(e.getDomain());
        assertThat(n.get("customerId").asText()).isEqualTo(e.getCustomerId());
        assertThat(textOrNull(n.get("email"))).isEqualTo(e.getEmail());
        assertThat(textOrNull(n.get("postalCode"))).isEqualTo(e.getPostalCode());
        assertThat(n.get("sku").asText()).isEqualTo(e.getSku());
        assertThat(n.get("merchant").asText()).isEqualTo(e.getMerchant());
        assertThat(n.get("channel").asText()).isEqualTo(e.getChannel());
        // Exact string: the Node side formats the unscaled value with the schema's scale, so "1234.5600".
        assertThat(n.get("amount").asText()).isEqualTo(e.getAmount().toPlainString());
        assertThat(n.get("currency").asText()).isEqualTo(e.getCurrency());
        assertThat(n.get("status").asText()).isEqualTo(e.getStatus());
        Map<String, String> attributes = new TreeMap<>();
        n.get("attributes").fields().forEachRemaining(f -> attributes.put(f.getKey(), f.getValue().asText()));
        assertThat(attributes).isEqualTo(new TreeMap<>(e.getAttributes()));
        assertThat(fieldNames(n)).containsExactlyInAnyOrderElementsOf(
                TransactionEvent.getClassSchema().getFields().stream().map(f -> f.name()).toList());
    }

    private static ObjectNode toJson(TransactionEvent e) {
        ObjectNode o = JSON.createObjectNode();
        o.put("transactionId", e.getTransactionId());
        o.put("eventTime", e.getEventTime().toString());
        o.put("domain", e.getDomain());
        o.put("customerId", e.getCustomerId());
        o.put("email", e.getEmail());
        o.put("postalCode", e.getPostalCode());
        o.put("sku", e.getSku());
        o.put("merchant", e.getMerchant());
        o.put("channel", e.getChannel());
        o.put("amount", e.getAmount().setScale(4).toPlainString());
        o.put("currency", e.getCurrency());
        o.put("status", e.getStatus());
        ObjectNode attributes = o.putObject("attributes");
        e.getAttributes().forEach(attributes::put);
        return o;
    }

    private static JsonNode runScript(String registryUrl, JsonNode request) throws IOException, InterruptedException {
        Path out = Files.createTempFile("tally-compat-out-", ".json");
        Path err = Files.createTempFile("tally-compat-err-", ".log");
        try {
            Process p = new ProcessBuilder(envOr("TALLY_NODE", "node"), "compat.js", "--registry", registryUrl)
                    .directory(compatDir.toFile())
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
            try (var stdin = p.getOutputStream()) {
                stdin.write(JSON.writeValueAsBytes(request));
            }
            if (!p.waitFor(SCRIPT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("compat.js did not finish within " + SCRIPT_TIMEOUT + ":\n" + Files.readString(err));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("compat.js failed with " + p.exitValue() + ":\n" + Files.readString(err));
            }
            return JSON.readTree(Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    private static String textOrNull(JsonNode n) {
        return n == null || n.isNull() ? null : n.asText();
    }

    private static List<String> fieldNames(JsonNode n) {
        List<String> names = new ArrayList<>();
        n.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static String envOr(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

}
