package io.tally.tests.aggregation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.ingest.app.IngestApp;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.source.RulesCheckCommand;
import io.tally.ingest.source.SourceCheck;
import io.tally.ingest.source.SourceTopics;
import io.tally.rules.GradeRules;
import io.tally.rules.source.RuleFields;
import io.tally.rules.source.Sources;
import io.tally.schemas.Topics;
import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way a source mapping and rules can miss a registered schema, caught before anything runs, against the real
 * registry: {@link SourceCheck} names the source, subject, version, schema id, rule and path of each problem;
 * {@code ./tally rules check} prints the same as PROBLEM lines and exits 1 (0 with "ok" for a mapping that fits, or
 * when the subject has no schema yet, 2 for a file that does not parse); ingest-app refuses to start with it.
 */
@ExtendWith(LocalStackExtension.class)
class SourceMappingCheckIT {
    /** One schema with every shape a mapping can trip over: nested record, array, double, int, union of records. */
    private static final String CHECKOUT = """
            {"type": "record", "name": "Checkout", "namespace": "%s", "fields": [
              {"name": "id", "type": "string"},
              {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
              {"name": "day", "type": "int"},
              {"name": "shop", "type": "string"},
              {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
                {"name": "id", "type": "string"},
                {"name": "email", "type": ["null", "string"], "default": null}]}},
              {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
                {"name": "sku", "type": "string"}]}}},
              {"name": "totalCents", "type": "long"},
              {"name": "total", "type": "double"},
              {"name": "status", "type": "string"},
              {"name": "payment", "type": [
                {"type": "record", "name": "Card", "fields": [{"name": "last4", "type": "string"}]},
                {"type": "record", "name": "Wallet", "fields": [{"name": "provider", "type": "string"}]}]}]}
            """;

    /** The approved amounts per customer, summed and counted per hour: every customerId and status must be found. */
    static final String RULES = """
            rules:
              - name: spend-per-customer
                entity: customerId
                filter: {field: status, in: [APPROVED]}
                value: amount
                aggregations: [sum, count]
                units: [hour]
                retention: P7D
            """;

    /** A rule appended to {@link #RULES}. */
    private static String rulesWith(String name, String entity, String qualifier) {
        return RULES + """
                  - name: %s
                    entity: %s
                %s    value: one
                    aggregations: [count]
                    units: [day]
                    retention: P7D
                """.formatted(name, entity, qualifier == null ? "" : "    qualifier: " + qualifier + "\n");
    }

    /** The mapping that fits {@link #CHECKOUT}, with one key replaced or added ({@code key: value} lines). */
    private static String sources(String topic, String... overrides) {
        Map<String, String> keys = new java.util.LinkedHashMap<>();
        keys.put("name", "checkout");
        keys.put("topics", "[" + topic + "]");
        keys.put("transaction-id", "id");
        keys.put("event-time", "at");
        keys.put("domain", "shop");
        keys.put("amount", "{path: totalCents, scale: 2}");
        keys.put("required", "[customerId]");
        keys.put("fields", "{customerId: customer.id, email: customer.email, card: payment.Card.last4}");
        for (String o : overrides) {
            int colon = o.indexOf(':');
            keys.put(o.substring(0, colon), o.substring(colon + 1).strip());
        }
        StringBuilder yaml = new StringBuilder("sources:\n  - ");
        keys.forEach((k, v) -> yaml.append(k).append(": ").append(v).append("\n    "));
        return yaml.toString();
    }

    /** A broken combination and what each of its problems must name. */
    record Case(String what, String sources, String rules, List<String> names) {}

    private static List<Case> brokenCases() {
        return List.of(
                new Case("a rule's entity path that does not exist", sources("checkouts"), rulesWith("per-phone", "customer.phone", null),
                        List.of("entity of rule per-phone", "'customer.phone'", "has no field 'phone'")),
                new Case("a path through an array", sources("checkouts"), rulesWith("per-sku", "customerId", "lines.sku"),
                        List.of("qualifier of rule per-sku", "'lines.sku'", "'lines' is an array")),
                new Case("a key field that is a record", sources("checkouts"), rulesWith("per-customer-record", "customer", null),
                        List.of("entity of rule per-customer-record", "at 'customer'", "it is a record", "Customer")),
                new Case("a double amount without double: allow", sources("checkouts", "amount: total"), RULES,
                        List.of("amount at 'total'", "it is a double", "amount.double: allow")),
                new Case("an event time of type int", sources("checkouts", "event-time: day"), RULES,
                        List.of("event-time at 'day': it is a", "int, not a timestamp-millis")),
                new Case("a union of two records without a branch name",
                        sources("checkouts", "fields: {customerId: customer.id, card: payment.last4}"), rulesWith("per-card", "card", null),
                        List.of("entity of rule per-card", "'payment.last4'", "'payment' is a union of [Card, Wallet]", "payment.Card")),
                new Case("a required field mapped to ~", sources("checkouts", "fields: {customerId: ~}"), RULES,
                        List.of("required 'customerId' is mapped to nothing")));
    }

    @Test
    void everyBrokenMappingIsAProblemNamingRuleAndPathAndTheCommandExits1(LocalSchemaRegistry registry, @TempDir Path dir)
            throws IOException {
        String prefix = "check-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        String subject = AvroSerdeConfig.subject(prefix + "checkouts", false);
        SchemaRegistryClient client = new SchemaRegistryClient(registry.url());
        int id = client.register(subject, checkout("com.example.checkout"));
        String where = "source checkout, subject " + subject + " (version 1, schema id " + id + "): ";

        for (Case c : brokenCases()) {
            SourceCheck.Report report = check(client, prefix, c.sources(), c.rules());
            assertThat(report.problems()).as("%s: problems", c.what()).singleElement().asString()
                    .startsWith(where).contains(c.names());
            assertThat(report.checked()).as("%s: subjects that fit", c.what()).isEmpty();

            Run run = command(dir, prefix, registry, c.sources(), c.rules());
            assertThat(run.exit()).as("%s: exit status; %s", c.what(), run).isEqualTo(RulesCheckCommand.EXIT_PROBLEMS);
            assertThat(run.lines("  PROBLEM: ")).as("%s: PROBLEM lines", c.what()).singleElement().asString()
                    .isEqualTo("  PROBLEM: " + report.problems().get(0));
            assertThat(run.out()).as(c.what()).contains("1 problem(s)").doesNotContain("fits:");
        }

        String allAtOnce = sources("checkouts", "amount: total", "event-time: day");
        SourceCheck.Report all = check(client, prefix, allAtOnce, rulesWith("per-phone", "customer.phone", "lines.sku"));
        assertThat(all.problems()).as("every problem of one file at once").hasSize(4)
                .anySatisfy(p -> assertThat(p).contains("event-time at 'day'"))
                .anySatisfy(p -> assertThat(p).contains("amount at 'total'"))
                .anySatisfy(p -> assertThat(p).contains("entity of rule per-phone", "'customer.phone'"))
                .anySatisfy(p -> assertThat(p).contains("qualifier of rule per-phone", "'lines.sku'"));

        String good = rulesWith("per-card", "card", "email");
        SourceCheck.Report fits = check(client, prefix, sources("checkouts"), good);
        assertThat(fits.problems()).isEmpty();
        assertThat(fits.checked()).containsExactly(where.substring(0, where.length() - 2));
        Run ok = command(dir, prefix, registry, sources("checkouts"), good);
        assertThat(ok.exit()).as("exit status of a mapping that fits; %s", ok).isEqualTo(RulesCheckCommand.EXIT_OK);
        assertThat(ok.lines("  fits: ")).containsExactly("  fits: " + fits.checked().get(0));
        assertThat(ok.lines("ok")).containsExactly("ok");
        assertThat(ok.out()).doesNotContain("PROBLEM");
    }

    @Test
    void aSubjectWithoutASchemaYetIsANoteNotAProblem(LocalSchemaRegistry registry, @TempDir Path dir) throws IOException {
        String prefix = "check-none-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        String subject = AvroSerdeConfig.subject(prefix + "never-produced", false);
        SchemaRegistryClient client = new SchemaRegistryClient(registry.url());
        String mapping = sources("never-produced");
        String rules = rulesWith("per-phone", "customer.phone", null); // would not fit; nothing to check it against yet

        SourceCheck.Report report = check(client, prefix, mapping, rules);
        assertThat(report.problems()).isEmpty();
        assertThat(report.checked()).isEmpty();
        assertThat(report.notes()).singleElement().asString().contains("source checkout", "subject " + subject + " has no schema yet");

        Run run = command(dir, prefix, registry, mapping, rules);
        assertThat(run.exit()).as("exit status; %s", run).isEqualTo(RulesCheckCommand.EXIT_OK);
        assertThat(run.lines("  note: ")).containsExactly("  note: " + report.notes().get(0));
        assertThat(run.lines("ok")).containsExactly("ok");
    }

    @Test
    void aFileThatDoesNotParseIsAUsageError(LocalSchemaRegistry registry, @TempDir Path dir) throws IOException {
        String prefix = "check-parse-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Map<String, List<String>> brokenSources = Map.of(
                "sources: [{name: checkout, topics: [checkouts]", List.of("not valid YAML/JSON"),
                sources("checkouts", "event-time: ~", "amount: {path: totalCents, scale: cents}"),
                List.of("source #1 (checkout): event-time is required", "amount.scale must be a whole number"));
        brokenSources.forEach((text, names) -> {
            Run run = command(dir, prefix, registry, text, RULES);
            assertThat(run.exit()).as("sources %s; %s", text, run).isEqualTo(RulesCheckCommand.EXIT_USAGE);
            assertThat(run.err()).startsWith("Invalid sources:").contains(names);
            assertThat(run.out()).isEmpty();
        });
        Run rules = command(dir, prefix, registry, sources("checkouts"), RULES.replace("value: amount", "value: price"));
        assertThat(rules.exit()).as("%s", rules).isEqualTo(RulesCheckCommand.EXIT_USAGE);
        assertThat(rules.err()).startsWith("Invalid grade rules:").contains("rule #1 (spend-per-customer): value 'price' is not amount or one");
    }

    @Test
    void aRecordNameSourceIsCheckedAgainstTheSubjectNamedByItsRecord(LocalSchemaRegistry registry, @TempDir Path dir) throws IOException {
        String prefix = "check-rn-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        String namespace = "com.example.rn" + UUID.randomUUID().toString().substring(0, 8);
        String recordName = namespace + ".Checkout";
        SchemaRegistryClient client = new SchemaRegistryClient(registry.url());
        int id = client.register(recordName, checkout(namespace));
        String[] byRecordName = {"subject-name-strategy: record-name", "record-name: " + recordName};
        String where = "source checkout, subject " + recordName + " (version 1, schema id " + id + ")";

        SourceCheck.Report fits = check(client, prefix, sources("checkouts", byRecordName), RULES);
        assertThat(fits.problems()).isEmpty();
        assertThat(fits.notes()).as("no look at <topic>-value, where nothing is registered").isEmpty();
        assertThat(fits.checked()).containsExactly(where);

        String broken = sources("checkouts", Stream.concat(Arrays.stream(byRecordName), Stream.of("event-time: day")).toArray(String[]::new));
        Run run = command(dir, prefix, registry, broken, RULES);
        assertThat(run.exit()).as("%s", run).isEqualTo(RulesCheckCommand.EXIT_PROBLEMS);
        assertThat(run.lines("  PROBLEM: ")).singleElement().asString().startsWith("  PROBLEM: " + where + ": event-time at 'day'");
    }

    @Test
    void ingestAppRefusesToStartNamingEveryRuleAndPath(TestKafka kafka, LocalSchemaRegistry registry, @TempDir Path dir) throws IOException {
        String prefix = "check-app-" + UUID.randomUUID().toString().substring(0, 8) + ".";
        Topics.Names topics = Topics.Names.withPrefix(prefix);
        String subject = AvroSerdeConfig.subject(prefix + "checkouts", false);
        int id = new SchemaRegistryClient(registry.url()).register(subject, checkout("com.example.checkout"));
        Path rules = Files.writeString(dir.resolve("app-rules.yaml"), rulesWith("per-sku", "customerId", "lines.sku"));
        Path mapping = Files.writeString(dir.resolve("app-sources.yaml"), sources("checkouts", "amount: total"));
        List<String> flags = new ArrayList<>(List.of(AggregationIT.ingestFlags(kafka, registry, topics, prefix + "app", dir)));
        flags.add("--ingest.rules.file=" + rules);
        flags.add("--ingest.sources.file=" + mapping);

        try (IngestApp app = new IngestApp(IngestSettings.load(flags.toArray(String[]::new), Map.of()))) {
            assertThatThrownBy(app::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("the sources in " + mapping + " and the rules do not fit the registered schemas")
                    .hasMessageContaining("source checkout, subject " + subject + " (version 1, schema id " + id + ")")
                    .hasMessageContaining("qualifier of rule per-sku) at 'lines.sku': 'lines' is an array")
                    .hasMessageContaining("amount at 'total': it is a double");
        }
    }

    private static Schema checkout(String namespace) {
        return new Schema.Parser().parse(CHECKOUT.formatted(namespace));
    }

    private static SourceCheck.Report check(SchemaRegistryClient client, String prefix, String sources, String rules) {
        SourceTopics topics = new SourceTopics(Sources.parse(sources, "sources.yaml"), prefix);
        return SourceCheck.run(topics, RuleFields.of(GradeRules.parse(rules, "rules.yaml")), client,
                SourceCheck.registrySubjectsIfNeeded(topics, client));
    }

    /** What {@code ./tally rules check} printed and returned. */
    record Run(int exit, String out, String err) {
        List<String> lines(String start) {
            return out.lines().filter(l -> l.startsWith(start)).toList();
        }
    }

    private static Run command(Path dir, String prefix, LocalSchemaRegistry registry, String sources, String rules) {
        try {
            Path sourcesFile = Files.writeString(Files.createTempFile(dir, "sources-", ".yaml"), sources);
            Path rulesFile = Files.writeString(Files.createTempFile(dir, "rules-", ".yaml"), rules);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exit = RulesCheckCommand.run(new String[] {"check", rulesFile.toString(), "--ingest.sources.file=" + sourcesFile,
                            "--schema.registry.url=" + registry.url(), "--topics.prefix=" + prefix}, Map.of(),
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
            return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
