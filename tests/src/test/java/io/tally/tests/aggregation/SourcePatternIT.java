package io.tally.tests.aggregation;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.ingest.source.SourceTopics;
import io.tally.ingest.topology.TallyTopology;
import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.rules.GradeRules;
import io.tally.rules.source.Sources;
import io.tally.schemas.Topics;
import io.tally.schemas.avro.orders.Customer;
import io.tally.schemas.avro.orders.Item;
import io.tally.schemas.avro.orders.OrderEvent;
import io.tally.schemas.avro.orders.Payment;
import io.tally.schemas.avro.orders.PaymentStatus;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.AvroSerializer;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A source named by a topic pattern, whose producers register under Confluent's RecordNameStrategy, beside a source
 * named by a list: every topic the pattern matches is read (a topic it does not match is not), records decode by
 * their schema id whatever subject holds it, and transaction ids are deduplicated within a source only: an order id
 * seen again on another topic of the same source counts once, the same id on the other source counts there too.
 */
@ExtendWith(LocalStackExtension.class)
class SourcePatternIT {
    private static final String SOURCES = """
            sources:
              - name: web
                topic-pattern: "orders-(eu|us)"
                subject-name-strategy: io.confluent.kafka.serializers.subject.RecordNameStrategy
                record-name: io.tally.schemas.avro.orders.OrderEvent
                transaction-id: orderId
                event-time: placedAt
                domain: shop
                amount: {path: payment.amountCents, scale: 2}
                fields: {customerId: customer.id, status: payment.status}
              - name: stores
                topics: [store-orders]
                subject-name-strategy: record-name
                record-name: io.tally.schemas.avro.orders.OrderEvent
                transaction-id: orderId
                event-time: placedAt
                domain: shop
                amount: {path: payment.amountCents, scale: 2}
                fields: {customerId: customer.id, status: payment.status}
            """;

    @Test
    void aPatternSourceReadsEveryMatchingTopicAndDedupesWithinItsSourceOnly(LocalSchemaRegistry registry, @TempDir Path dir)
            throws Exception {
        String prefix = "pattern-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Topics.Names topics = Topics.Names.withPrefix(prefix);
        Instant now = Instant.now();
        long hour = TimeUnit.HOUR.bucketIndex(now);

        AvroSerializer<OrderEvent> producer = new AvroSerializer<>();
        producer.configure(Map.of(AvroSerdeConfig.SCHEMA_REGISTRY_URL, registry.url(),
                AvroSerdeConfig.VALUE_SUBJECT_NAME_STRATEGY, "io.confluent.kafka.serializers.subject.RecordNameStrategy"), false);
        record Sent(String topic, byte[] value) {}
        List<Sent> sent = new ArrayList<>();
        // Order ids per topic: orders-us repeats o-5..o-9 of orders-eu (duplicates within "web") and adds o-10..o-14;
        // store-orders has o-0..o-9 again (another source: they count there too); no source reads orders-apac.
        Map<String, int[]> ids = new java.util.LinkedHashMap<>();
        ids.put("orders-eu", new int[] {0, 10});
        ids.put("orders-us", new int[] {5, 15});
        ids.put("store-orders", new int[] {0, 10});
        ids.put("orders-apac", new int[] {0, 10});
        Map<Integer, java.util.Set<Integer>> countedPerCustomer = new HashMap<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        ids.forEach((t, range) -> {
            for (int i = range[0]; i < range[1]; i++) {
                sent.add(new Sent(prefix + t, producer.serialize(prefix + t, order("o-" + i, now, "c-" + (i % 3), 100 + i))));
                String source = t.startsWith("orders-") ? "web" : "stores";
                if (!t.equals("orders-apac") && seen.add(source + ":" + i)) {
                    countedPerCustomer.computeIfAbsent(i % 3, k -> new java.util.HashSet<>()).add(source.equals("web") ? i : 1000 + i);
                }
            }
        });
        assertThat(new SchemaRegistryClient(registry.url()).latest(OrderEvent.getClassSchema().getFullName()).schema())
                .as("registered under the record's name").isEqualTo(OrderEvent.getClassSchema());

        StreamsBuilder builder = new StreamsBuilder();
        Path rules = Files.writeString(dir.resolve("rules.yaml"), SourceMappingCheckIT.RULES);
        TallyTopology.build(builder, topics, InputFuzzIT.SETTINGS, GradeRules.load(rules.toString()),
                new SourceTopics(Sources.parse(SOURCES, "pattern-sources.yaml"), topics.prefix()),
                TallyTopology.eventDeserializer(new SchemaRegistryClient(registry.url())));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "source-pattern");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve("state").toString());
        Map<String, BucketDocument> buckets;
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), p, now)) {
            Map<String, TestInputTopic<byte[], byte[]>> inputs = new HashMap<>();
            for (Sent s : sent) {
                if (s.topic().endsWith("orders-apac")) continue; // no source reads it: the driver refuses a topic nobody subscribes
                inputs.computeIfAbsent(s.topic(), t -> driver.createInputTopic(t, new ByteArraySerializer(), new ByteArraySerializer()))
                        .pipeInput(null, s.value(), now);
            }
            buckets = GradeBuckets.inStore(driver);
        }

        for (int k = 0; k < 3; k++) {
            long count = countedPerCustomer.get(k).size();
            BigDecimal sum = countedPerCustomer.get(k).stream().map(i -> BigDecimal.valueOf(100 + i % 1000, 2))
                    .reduce(BigDecimal.ZERO, BigDecimal::add);
            BucketDocument b = buckets.get("shop|c-" + k + "|spend-per-customer|hour|" + hour);
            assertThat(b).as("bucket of c-%d", k).isNotNull();
            assertThat(b.count()).as("count of c-%d: each order id once per source", k).isEqualTo(count);
            assertThat(b.sum()).as("sum of c-%d", k).isEqualByComparingTo(sum);
        }
        assertThat(buckets).as("one bucket per customer, nothing from the topic no source reads").hasSize(3);
    }

    private static OrderEvent order(String id, Instant at, String customer, long cents) {
        return OrderEvent.newBuilder().setOrderId(id).setPlacedAt(at.toString()).setShop("shop")
                .setCustomer(Customer.newBuilder().setId(customer).setEmail(null).build()).setShipping(null)
                .setItem(Item.newBuilder().setSku("sku-1").setMerchant("m-1").build())
                .setPayment(Payment.newBuilder().setAmountCents(cents).setCurrency("EUR").setStatus(PaymentStatus.APPROVED)
                        .setChannel("WEB").build())
                .setAttributes(Map.of()).build();
    }
}
