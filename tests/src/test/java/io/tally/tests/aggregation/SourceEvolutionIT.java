package io.tally.tests.aggregation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.ingest.source.SourceTopics;
import io.tally.ingest.topology.TallyTopology;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.rules.source.Sources;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.RegisteredSchema;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SchemaRegistryException;
import io.tally.schemas.serde.WireFormat;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shop's own order schema evolving on one topic while Tally reads it through a source mapping, with the real
 * registry deciding what may be registered: v2 adds a field and renames {@code customer.id} to {@code customer.ref}
 * with {@code "aliases": ["id"]}, so the mapping, still saying {@code customer.id}, finds it through the alias; v3
 * drops {@code customer.email}, which a rule keys on. Producers upgrade one by one, so each switch interleaves the
 * two versions. Every v1 and v2 event counts exactly; every v3 record is on the DLQ as SCHEMA_MISMATCH naming the
 * path and its schema id; nothing else is dropped and nothing throws.
 */
@ExtendWith(LocalStackExtension.class)
class SourceEvolutionIT {
    private static final String ID = "{\"name\": \"id\", \"type\": \"string\"}";
    private static final String REF_WAS_ID = "{\"name\": \"ref\", \"type\": \"string\", \"aliases\": [\"id\"]}";
    private static final String EMAIL = "{\"name\": \"email\", \"type\": [\"null\", \"string\"], \"default\": null}";
    private static final String CHANNEL = ", {\"name\": \"channel\", \"type\": \"string\", \"default\": \"WEB\"}";

    private static final Schema V1 = orderSchema(ID + ", " + EMAIL, "");
    private static final Schema V2 = orderSchema(REF_WAS_ID + ", " + EMAIL, CHANNEL);
    private static final Schema V3 = orderSchema(REF_WAS_ID, CHANNEL);

    private static final String RULES = SourceMappingCheckIT.RULES + """
              - name: orders-per-customer
                entity: customerId
                value: one
                aggregations: [count]
                units: [hour]
                retention: P7D
              - name: orders-per-email
                entity: email
                value: one
                aggregations: [count]
                units: [hour]
                retention: P7D
            """;

    private static final String SOURCES = """
            sources:
              - name: shop-orders
                topics: [orders]
                transaction-id: id
                event-time: time
                domain: shop
                amount: {path: amountCents, scale: 2}
                required: [customerId]
                fields:
                  customerId: customer.id
                  email: customer.email
            """;

    /** One order as the shop means it, whichever schema version writes it. */
    record Order(int version, String id, Instant time, String shop, String customer, String email, long cents, String status) {}

    /** A grade bucket's expected value: count, and the sum when the rule sums. */
    record Expected(long count, BigDecimal sum) {
        Expected plus(Expected o) {
            return new Expected(count + o.count, sum == null ? null : sum.add(o.sum));
        }
    }

    @Test
    void v1AndV2CountExactlyThroughTheAliasAndEveryV3RecordIsASchemaMismatchNamingPathAndId(LocalSchemaRegistry registry,
                                                                                            @TempDir Path dir) throws IOException {
        String prefix = "evo-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Topics.Names topics = Topics.Names.withPrefix(prefix);
        String topic = prefix + "orders";
        String subject = AvroSerdeConfig.subject(topic, false);
        SchemaRegistryClient producerRegistry = new SchemaRegistryClient(registry.url());
        // Pinned on the subject: an external registry (SCHEMA_REGISTRY_URL) may have another global default.
        producerRegistry.setCompatibility(subject, "BACKWARD");
        int v1Id = producerRegistry.register(subject, V1);
        // The alias is what makes the rename compatible: without it a v2 reader cannot read v1's customer.id.
        assertThatThrownBy(() -> producerRegistry.register(subject, orderSchema(REF_WAS_ID.replace(", \"aliases\": [\"id\"]", "")
                + ", " + EMAIL, CHANNEL)))
                .isInstanceOfSatisfying(SchemaRegistryException.class,
                        e -> assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.INCOMPATIBLE));

        List<Order> orders = workload(new Random(20_261_127), Instant.now());
        AvroSerializer<GenericRecord> producer = new AvroSerializer<>(producerRegistry); // auto-registers v2, then v3
        List<byte[]> sent = new ArrayList<>();
        for (Order o : orders) sent.add(producer.serialize(topic, record(o)));

        SchemaRegistryClient check = new SchemaRegistryClient(registry.url());
        int v2Id = check.lookup(subject, V2);
        int v3Id = check.lookup(subject, V3);
        RegisteredSchema latest = check.latest(subject);
        assertThat(List.of(latest.version(), latest.id())).as("v3 is the subject's third version").containsExactly(3, v3Id);
        assertThat(List.of(v1Id, v2Id, v3Id)).doesNotHaveDuplicates();
        for (int i = 0; i < sent.size(); i++) {
            int want = switch (orders.get(i).version()) { case 1 -> v1Id; case 2 -> v2Id; default -> v3Id; };
            assertThat(WireFormat.schemaId(sent.get(i), topic)).as("schema id of record %d", i).isEqualTo(want);
        }

        Path rulesFile = Files.writeString(dir.resolve("evolution-rules.yaml"), RULES);
        StreamsBuilder builder = new StreamsBuilder();
        TallyTopology.build(builder, topics, InputFuzzIT.SETTINGS, GradeRules.load(rulesFile.toString()),
                new SourceTopics(Sources.parse(SOURCES, "evolution-sources.yaml"), topics.prefix()),
                TallyTopology.eventDeserializer(new SchemaRegistryClient(registry.url())));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "source-evolution");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve("state").toString());
        Instant start = Instant.now();
        List<String> crashes = new ArrayList<>();
        Map<Long, InputFuzzIT.DeadLetter> dead = new TreeMap<>();
        Map<String, BucketDocument> buckets;
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), p, start)) {
            TestInputTopic<byte[], byte[]> input = driver.createInputTopic(topic, new ByteArraySerializer(), new ByteArraySerializer());
            for (int offset = 0; offset < sent.size(); offset++) {
                try {
                    input.pipeInput(null, sent.get(offset), start.plusMillis(offset));
                } catch (RuntimeException e) {
                    crashes.add("offset " + offset + " (v" + orders.get(offset).version() + "): " + e);
                }
            }
            for (TestRecord<byte[], byte[]> r : driver.createOutputTopic(topics.transactionsDlq(), new ByteArrayDeserializer(),
                    new ByteArrayDeserializer()).readRecordsToList()) {
                InputFuzzIT.DeadLetter d = InputFuzzIT.DeadLetter.of(r.headers(), r.value());
                dead.put(Long.parseLong(d.sourceOffset()), d);
            }
            buckets = GradeBuckets.inStore(driver);
        }
        assertThat(crashes).as("records that made the topology throw").isEmpty();

        List<Long> v3Offsets = new ArrayList<>();
        for (int i = 0; i < orders.size(); i++) if (orders.get(i).version() == 3) v3Offsets.add((long) i);
        assertThat(dead.keySet()).as("offsets on the DLQ: exactly the v3 records").containsExactlyElementsOf(v3Offsets);
        dead.forEach((offset, d) -> {
            assertThat(d.reason()).as("reason of offset %d", offset).isEqualTo("SCHEMA_MISMATCH");
            assertThat(d.message()).as("message of offset %d", offset)
                    .contains("writer schema id " + v3Id)
                    .contains("'customer.email'")
                    .contains("orders-per-email")
                    .contains("has no field 'email'");
            assertThat(d.sourceTopic()).isEqualTo(topic);
            assertThat(d.value()).as("original bytes of offset %d", offset).isEqualTo(sent.get(offset.intValue()));
        });

        Map<String, Expected> expected = expectedBuckets(orders.stream().filter(o -> o.version() < 3).toList());
        assertThat(buckets.keySet()).as("grade buckets: those of the v1 and v2 events, no other")
                .containsExactlyInAnyOrderElementsOf(expected.keySet());
        expected.forEach((key, want) -> {
            BucketDocument got = buckets.get(key);
            assertThat(got.count()).as("count of %s", key).isEqualTo(want.count());
            if (want.sum() == null) assertThat(got.sum()).as("sum of %s", key).isNull();
            else assertThat(got.sum()).as("sum of %s", key).isEqualByComparingTo(want.sum());
        });
        long accepted = buckets.entrySet().stream().filter(e -> e.getKey().contains("|orders-per-customer|"))
                .mapToLong(e -> e.getValue().count()).sum();
        assertThat(accepted + dead.size()).as("accepted (%d) + DLQ (%d) = sent", accepted, dead.size()).isEqualTo(sent.size());
        assertThat(orders.stream().filter(o -> o.version() == 2 && o.email() != null)).as("v2 events with an email").isNotEmpty();
    }

    /**
     * 400 v1, 475 v2, 125 v3 orders in production order: v1 alone, then v1 and v2 alternating while producers upgrade,
     * then v2 alone, then v2 and v3 alternating, then v3 alone; over the last 3 hours, in two shops.
     */
    private static List<Order> workload(Random random, Instant now) {
        List<Order> out = new ArrayList<>();
        int[][] phases = {{1, 1, 300}, {1, 2, 200}, {2, 2, 300}, {2, 3, 150}, {3, 3, 50}}; // {from, to, records}
        for (int[] phase : phases) {
            for (int i = 0; i < phase[2]; i++) {
                int version = i % 2 == 0 ? phase[0] : phase[1];
                out.add(new Order(version, "order-" + out.size(), now.minusSeconds(random.nextInt(3 * 3600)),
                        random.nextBoolean() ? "shop-a" : "shop-b", "cust-" + random.nextInt(40),
                        random.nextInt(4) == 0 ? null : "user" + random.nextInt(30) + "@example.com",
                        1 + random.nextInt(99_999), random.nextInt(5) == 0 ? "DECLINED" : "APPROVED"));
            }
        }
        return out;
    }

    /** The hour buckets of each rule, by simple sums and counts: key {@code domain|entity|grade|hour|index}. */
    private static Map<String, Expected> expectedBuckets(List<Order> orders) {
        Map<String, Expected> out = new HashMap<>();
        for (Order o : orders) {
            String hour = "|hour|" + TimeUnit.HOUR.bucketIndex(o.time());
            out.merge(o.shop() + "|" + o.customer() + "|orders-per-customer" + hour, new Expected(1, null), Expected::plus);
            if (o.status().equals("APPROVED")) {
                out.merge(o.shop() + "|" + o.customer() + "|spend-per-customer" + hour,
                        new Expected(1, BigDecimal.valueOf(o.cents(), 2)), Expected::plus);
            }
            if (o.email() != null) out.merge(o.shop() + "|" + o.email() + "|orders-per-email" + hour, new Expected(1, null), Expected::plus);
        }
        return out;
    }

    private static GenericRecord record(Order o) {
        Schema schema = switch (o.version()) { case 1 -> V1; case 2 -> V2; default -> V3; };
        Schema customerSchema = schema.getField("customer").schema();
        GenericRecord customer = new GenericData.Record(customerSchema);
        customer.put(o.version() == 1 ? "id" : "ref", o.customer());
        if (customerSchema.getField("email") != null) customer.put("email", o.email());
        GenericRecord r = new GenericData.Record(schema);
        r.put("id", o.id());
        r.put("time", o.time().toEpochMilli());
        r.put("shop", o.shop());
        r.put("customer", customer);
        r.put("amountCents", o.cents());
        r.put("status", o.status());
        if (schema.getField("channel") != null) r.put("channel", "MOBILE");
        return r;
    }

    private static Schema orderSchema(String customerFields, String extraFields) {
        return new Schema.Parser().parse("""
                {"type": "record", "name": "ShopOrder", "namespace": "com.example.shop", "fields": [
                  {"name": "id", "type": "string"},
                  {"name": "time", "type": {"type": "long", "logicalType": "timestamp-millis"}},
                  {"name": "shop", "type": "string"},
                  {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [%s]}},
                  {"name": "amountCents", "type": "long"},
                  {"name": "status", "type": "string"}%s]}
                """.formatted(customerFields, extraFields));
    }
}
