package io.tally.tests.serde;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.RetryPolicy;
import io.tally.schemas.serde.RegistryClientSettings;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/** Events, schemas and clients shared by the serde ITs. One registry per JVM: every test uses its own topic. */
final class SerdeFixtures {
    static final Schema V1 = TransactionEvent.getClassSchema();
    /** The next version (schemas/src/main/avro-v2): v1 plus deviceId (nullable) and loyaltyTier (default NONE). */
    static final Schema V2 = load("/avro-v2/TransactionEvent.avsc");

    private SerdeFixtures() {}

    /** A topic name no other test uses, so subjects start empty. */
    static String freshTopic(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A client with short backoffs: the real registry answers at once or not at all. */
    static SchemaRegistryClient client(LocalSchemaRegistry registry) {
        return new SchemaRegistryClient(RegistryClientSettings.forUrls(registry.url())
                .withRetry(new RetryPolicy(1, Duration.ofMillis(10), Duration.ofMillis(50))));
    }

    /** Serializer settings for the registry with short backoffs, plus {@code pairs} (key, value, key, value ...). */
    static Map<String, Object> config(LocalSchemaRegistry registry, Object... pairs) {
        Map<String, Object> m = new HashMap<>();
        m.put(AvroSerdeConfig.SCHEMA_REGISTRY_URL, registry.url());
        m.put(AvroSerdeConfig.RETRIES_WAIT_MS, 10);
        for (int i = 0; i < pairs.length; i += 2) m.put((String) pairs[i], pairs[i + 1]);
        return m;
    }

    /** Events covering the awkward corners: negative and 18-digit amounts, nulls, empty and multi-entry maps. */
    static List<TransactionEvent> events() {
        return List.of(
                event("tx-1", "2026-11-21T10:15:30.123Z", "1234.5600", "a@example.com", null, Map.of("risk", "low")),
                event("tx-2", "1970-01-01T00:00:00Z", "-0.0001", null, "10115", Map.of()),
                event("tx-3", "2038-01-19T03:14:08.999Z", "99999999999999.9999", "ü@exämple.de", "E1 6AN",
                        Map.of("device", "ios", "flag", "velocity")),
                event("tx-4", "2026-02-28T23:59:59.001Z", "0.0000", null, null, Map.of("k", "")));
    }

    static TransactionEvent event(String id, String time, String amount, String email, String postalCode,
                                  Map<String, String> attributes) {
        return TransactionEvent.newBuilder()
                .setTransactionId(id).setEventTime(Instant.parse(time))
                .setDomain("shop").setCustomerId("cust-" + id).setEmail(email).setPostalCode(postalCode)
                .setSku("sku-" + id).setMerchant("m-7").setChannel("WEB")
                .setAmount(new BigDecimal(amount)).setCurrency("EUR").setStatus("APPROVED")
                .setAttributes(attributes)
                .build();
    }

    /** The event as a GenericRecord of the v2 schema, with the two new fields set. */
    static GenericRecord asV2(TransactionEvent e, String deviceId, String loyaltyTier) {
        GenericRecord r = new GenericData.Record(V2);
        for (Schema.Field f : V1.getFields()) r.put(f.name(), e.get(f.name()));
        r.put("deviceId", deviceId);
        r.put("loyaltyTier", loyaltyTier);
        return r;
    }

    /** v1 plus a field without a default: new readers could not read old events, so BACKWARD rejects it. */
    static Schema incompatibleWithV1() {
        try {
            ObjectMapper json = new ObjectMapper();
            ObjectNode schema = (ObjectNode) json.readTree(V1.toString());
            ObjectNode field = ((ArrayNode) schema.get("fields")).addObject();
            field.put("name", "riskScore");
            field.put("type", "double");
            return new Schema.Parser().parse(schema.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Schema load(String resource) {
        try (InputStream in = SerdeFixtures.class.getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException(resource + " is not on the classpath (schemas jar)");
            return new Schema.Parser().parse(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
