package io.tally.rules.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.rules.RulesException;
import io.tally.schemas.serde.SubjectNameStrategy;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SourcesTest {
    /** A source with every required key, for files whose other sources are the point. */
    private static final String VALID = """
              - name: %s
                topics: [%s]
                transaction-id: id
                event-time: time
                domain: shop
                amount: total
            """;

    /** The problems of {@code yaml}, the key list of an unknown key's problem (a set, in no fixed order) left out. */
    private static List<String> problems(String yaml) {
        try {
            Sources.parse(yaml, "f.yaml");
        } catch (RulesException e) {
            return e.problems().stream().map(p -> p.replaceFirst("\\(expected one of \\[.*]\\)$", "(expected one of …)")).toList();
        }
        throw new AssertionError("expected the file to be refused:\n" + yaml);
    }

    @Test
    void theShippedDefaultReadsTransactionEventsOnTheTransactionsTopic() {
        Sources sources = Sources.load(Sources.BUILTIN_DEFAULT);
        assertThat(sources.sources()).hasSize(1);
        SourceMapping m = sources.sources().get(0);
        assertThat(m.name()).isEqualTo("transactions");
        assertThat(m.topics()).containsExactly("transactions");
        assertThat(m.subjectStrategy()).isEqualTo(SubjectNameStrategy.TOPIC_NAME);
        assertThat(m.recordName()).hasValue("io.tally.schemas.avro.TransactionEvent");
        assertThat(m.transactionId()).isEqualTo(FieldPath.parse("transactionId"));
        assertThat(m.eventTime()).isEqualTo(FieldPath.parse("eventTime"));
        assertThat(m.domain()).hasValue(FieldPath.parse("domain"));
        assertThat(m.amount()).hasValue(new SourceMapping.Amount(FieldPath.parse("amount"), null, false));
        assertThat(m.currency()).hasValue(FieldPath.parse("currency"));
        assertThat(m.required()).containsExactly("customerId");
        assertThat(m.fields()).isEmpty();
        assertThat(sources.sourceOf("transactions")).containsSame(m);
        assertThat(sources.sourceOf("orders")).isEmpty();
    }

    @Test
    void theBuiltInDefaultIsTheRepositorysSourcesFile() {
        // The jar's copy is built from rules/default-sources.yaml; the tests run in the module directory.
        assertThat(Sources.load(Sources.BUILTIN_DEFAULT).sources()).isEqualTo(Sources.load("default-sources.yaml").sources());
        assertThatThrownBy(() -> Sources.load("builtin:other.yaml")).hasMessageContaining("no built-in sources file named builtin:other.yaml");
        assertThatThrownBy(() -> Sources.load("/no/such/sources.yaml")).hasMessageContaining("cannot read sources file /no/such/sources.yaml");
    }

    @Test
    void theTwoSchemaExampleParses() {
        Sources sources = Sources.load("two-schema-sources.yaml");
        assertThat(sources.sources()).extracting(SourceMapping::name).containsExactly("transactions", "orders");
        assertThat(sources.sourceOf("orders").orElseThrow().pathOf("customerId")).hasValue(FieldPath.parse("customer.id"));
    }

    @Test
    void aFileOfSeveralSourcesParsesEveryForm() {
        Sources sources = Sources.parse("""
                sources:
                  - name: orders
                    topics: [orders, returns]
                    transaction-id: orderId
                    event-time: placedAt
                    domain: shop
                    amount: {path: payment.amountCents, scale: 2}
                    currency: payment.currency
                    required: [customerId, 'attributes[device.id]']
                    fields:
                      customerId: customer.id
                      postalCode: ~
                  - name: clicks
                    topic-pattern: 'clicks-.*'
                    subject-name-strategy: RecordNameStrategy
                    record-name: com.shop.Click
                    transaction-id: clickId
                    event-time: at
                    domain-constant: web
                    amount: ~
                  - name: prices
                    topics: [prices]
                    transaction-id: id
                    event-time: at
                    domain: shop
                    amount: {path: price, double: allow}
                  - name: refunds
                    topics: [refunds]
                    transaction-id: id
                    event-time: at
                    domain: shop
                    amount: refund.total
                """, "f.yaml");
        assertThat(sources.sources()).extracting(SourceMapping::name).containsExactly("orders", "clicks", "prices", "refunds");
        assertThat(sources.namedTopics()).containsExactly("orders", "returns", "prices", "refunds");

        SourceMapping orders = sources.sources().get(0);
        assertThat(orders.topicPattern()).isEmpty();
        assertThat(orders.amount()).hasValue(new SourceMapping.Amount(FieldPath.parse("payment.amountCents"), 2, false));
        assertThat(orders.domainConstant()).isEmpty();
        assertThat(orders.required()).containsExactly("customerId", "attributes[device.id]");
        assertThat(orders.pathOf("customerId")).hasValue(FieldPath.parse("customer.id"));
        assertThat(orders.pathOf("postalCode")).isEmpty();
        assertThat(orders.pathOf("item.sku")).hasValue(FieldPath.parse("item.sku"));
        assertThat(orders.describeTopics()).isEqualTo("topics orders, returns");

        SourceMapping clicks = sources.sources().get(1);
        assertThat(clicks.topics()).isEmpty();
        assertThat(clicks.subjectStrategy()).isEqualTo(SubjectNameStrategy.RECORD_NAME);
        assertThat(clicks.recordName()).hasValue("com.shop.Click");
        assertThat(clicks.domain()).isEmpty();
        assertThat(clicks.domainConstant()).hasValue("web");
        assertThat(clicks.amount()).isEmpty();
        assertThat(clicks.describeTopics()).isEqualTo("topics matching clicks-.*");

        assertThat(sources.sources().get(2).amount()).hasValue(new SourceMapping.Amount(FieldPath.parse("price"), null, true));
        assertThat(sources.sources().get(3).amount()).hasValue(new SourceMapping.Amount(FieldPath.parse("refund.total"), null, false));
        assertThat(sources.sources().get(3).describeTopics()).isEqualTo("topic refunds");
    }

    @Test
    void aTopicPatternMatchesWholeNamesIncludingTopicsCreatedLater() {
        Sources sources = Sources.parse("""
                sources:
                  - {name: clicks, topic-pattern: 'clicks-.*', transaction-id: id, event-time: at, domain: d, amount: ~}
                  - {name: all, topic-pattern: '.*', transaction-id: id, event-time: at, domain: d, amount: ~}
                """, "f.yaml");
        assertThat(sources.sourceOf("clicks-eu-2027")).map(SourceMapping::name).hasValue("clicks");
        assertThat(sources.sourceOf("old-clicks-eu")).map(SourceMapping::name).hasValue("all");
        assertThat(sources.namedTopics()).isEmpty();
    }

    @Test
    void everyProblemOfEverySourceIsReportedTogetherNamingTheSourceAndTheKey() {
        List<String> problems = problems("""
                sources:
                  - name: a
                    colour: blue
                    topics: [a]
                    event-time: time
                    domain: shop
                    amount: total
                  - name: b
                    topics: [b]
                    topic-pattern: 'b-.*'
                    transaction-id: id
                    event-time: time
                    domain: shop
                    amount: total
                  - name: c
                    topic-pattern: '(c'
                    subject-name-strategy: record-name
                    transaction-id: id
                    event-time: time
                    domain: shop
                    amount: total
                  - name: d
                    topics: [d]
                    subject-name-strategy: by-magic
                    transaction-id: id
                    event-time: time
                    domain-constant: 'x|y'
                    amount: {path: total, scale: 19, double: maybe, currency: EUR}
                """);
        assertThat(problems).containsExactlyInAnyOrder(
                "f.yaml source #1 (a): unknown key 'colour' (expected one of …)",
                "f.yaml source #1 (a): transaction-id is required (a field path in the event)",
                "f.yaml source #2 (b): give either topics (a list) or topic-pattern (a regular expression)",
                "f.yaml source #3 (c): topic-pattern '(c' is not a regular expression: Unclosed group",
                "f.yaml source #3 (c): subject-name-strategy record-name needs record-name, the full name of the event record "
                        + "(for example com.shop.OrderPlaced)",
                "f.yaml source #4 (d): subject-name-strategy 'by-magic' is not a subject name strategy: use topic-name, "
                        + "record-name or topic-record-name (or Confluent's TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy)",
                "f.yaml source #4 (d): domain-constant contains '|', the partition-key separator",
                "f.yaml source #4 (d): unknown key 'amount.currency' (expected one of …)",
                "f.yaml source #4 (d): amount.scale must be a whole number from 0 to 18 (2 for cents)",
                "f.yaml source #4 (d): amount.double must be allow or refuse (the default)");
    }

    @Test
    void aSourceNameIsUsedOnceAndATopicBelongsToOneSource() {
        List<String> problems = problems("sources:\n" + VALID.formatted("a", "t1") + VALID.formatted("a", "t2") + VALID.formatted("b", "t1"));
        assertThat(problems).containsExactly(
                "f.yaml source #2 (a): duplicate name 'a'",
                "f.yaml source #3 (b): topic 't1' is read by source 'a' already; a topic belongs to one source");
    }

    @Test
    void domainAndDomainConstantExcludeEachOther() {
        String both = VALID.formatted("a", "t") + "    domain-constant: web\n";
        String neither = VALID.formatted("b", "u").replace("    domain: shop\n", "");
        assertThat(problems("sources:\n" + both + neither)).containsExactly(
                "f.yaml source #1 (a): give either domain (a field path) or domain-constant (one domain for every event)",
                "f.yaml source #2 (b): give either domain (a field path) or domain-constant (one domain for every event)");
    }

    @Test
    void anAmountMustBeDeclaredEvenWhenTheSourceHasNone() {
        assertThat(problems("sources:\n" + VALID.formatted("a", "t").replace("    amount: total\n", "")))
                .singleElement().asString().startsWith("f.yaml source #1 (a): amount is required: a path");
    }

    @Test
    void anAmountScaleIsAWholeNumberFrom0To18() {
        for (String bad : new String[] {"-1", "19", "2.5", "'2'", "two"}) {
            assertThat(problems("sources:\n" + VALID.formatted("a", "t").replace("amount: total", "amount: {path: total, scale: " + bad + "}")))
                    .as(bad).containsExactly("f.yaml source #1 (a): amount.scale must be a whole number from 0 to 18 (2 for cents)");
        }
        for (int good : new int[] {0, 18}) {
            assertThat(Sources.parse("sources:\n" + VALID.formatted("a", "t").replace("amount: total", "amount: {path: total, scale: " + good + "}"),
                    "f.yaml").sources().get(0).amount()).map(SourceMapping.Amount::scale).hasValue(good);
        }
    }

    @Test
    void pathsAreCheckedNamingTheKey() {
        String yaml = "sources:\n" + VALID.formatted("a", "t").replace("event-time: time", "event-time: 'a..b'")
                + "    required: ['x[y']\n    fields: {customerId: 'customer.'}\n";
        assertThat(problems(yaml)).containsExactly(
                "f.yaml source #1 (a): event-time: 'a..b' is not a field path: an empty segment at position 3",
                "f.yaml source #1 (a): required: 'x[y' is not a field path: '[' at position 2 is never closed",
                "f.yaml source #1 (a): fields.customerId: 'customer.' is not a field path: it ends with '.'");
    }

    @Test
    void aSourceNameCannotHoldSeparators() {
        assertThat(problems("sources:\n" + VALID.formatted("'a:b'", "t")))
                .singleElement().asString().startsWith("f.yaml source #1 (a:b): name must match [a-z0-9][a-z0-9-]{0,63}");
    }

    @Test
    void aFileWithoutSourcesIsRefused() {
        assertThat(problems("sources: []")).containsExactly("f.yaml: expected a non-empty list under 'sources'");
        assertThat(problems("rules: []")).containsExactly("f.yaml: expected a non-empty list under 'sources'");
        assertThat(problems("sources: [")).singleElement().asString().startsWith("f.yaml: not valid YAML/JSON");
    }

    @Test
    void theSourcesKeepTheirListsImmutable() {
        SourceMapping m = Sources.load(Sources.BUILTIN_DEFAULT).sources().get(0);
        assertThatThrownBy(() -> m.topics().add("x")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> m.fields().put("x", Optional.empty())).isInstanceOf(UnsupportedOperationException.class);
    }
}
