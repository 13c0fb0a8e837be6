package io.tally.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.TimeUnit;
import io.tally.rules.source.Sources;
import java.util.List;
import org.junit.jupiter.api.Test;

public class RuleVersionsTest {
    static final Sources DEFAULT_SOURCES = Sources.load(Sources.BUILTIN_DEFAULT);

    public static final String SPEND = """
              - name: spend
                entity: customerId
                filter: {field: status, in: [APPROVED, DECLINED]}
                value: amount
                aggregations: [sum, count, max]
                units: [hour, day]
                retention: P35D
            """;

    static List<GradeVersion> versions(String rules, Sources sources) {
        return RuleVersions.of(GradeRules.parse("rules:\n" + rules, "test"), sources);
    }

    public static List<GradeVersion> versions(String rules) {
        return versions(rules, DEFAULT_SOURCES);
    }

    /** The version of rule {@code spend} in {@code unit}. */
    static String only(String rules, String unit) {
        return versions(rules).stream().filter(g -> g.grade().equals("spend/" + unit)).findFirst().orElseThrow().version();
    }

    /**
     * Pins the canonical form and one version: a change here changes the version of every grade of every deployment,
     * which the next release would read as every rule changed. Change it only on purpose, with {@link RuleVersions#FORM}.
     */
    @Test
    void theFormAndOneVersionArePinned() {
        GradeRule rule = GradeRules.load(GradeRules.BUILTIN_DEFAULT).rule("spend-per-customer").orElseThrow();
        assertThat(RuleVersions.canonical(rule, TimeUnit.DAY, DEFAULT_SOURCES)).isEqualTo("""
                form tally-grade-version/1
                unit day
                value amount
                aggregations [5:count,3:max,3:min,3:sum]
                retention 3024000s0n
                qualified false
                filter in [8:APPROVED]
                source 12:transactions
                 topics [12:transactions]
                 transaction-id path(13:transactionId)
                 event-time path(9:eventTime)
                 domain path(6:domain)
                 amount path(6:amount) scale none double false
                 currency path(8:currency)
                 required [path(10:customerId)]
                 entity path(10:customerId)
                 qualifier none
                 filter path(6:status)
                """);
        assertThat(RuleVersions.version(rule, TimeUnit.DAY, DEFAULT_SOURCES)).isEqualTo("26ea97220280");
    }

    @Test
    void aVersionIsTwelveHexDigitsPerGrade() {
        List<GradeVersion> v = versions(SPEND);
        assertThat(v).extracting(GradeVersion::grade).containsExactly("spend/hour", "spend/day");
        assertThat(v).allSatisfy(g -> assertThat(g.version()).matches("[0-9a-f]{12}"));
        assertThat(v.get(0).version()).isNotEqualTo(v.get(1).version());
    }

    @Test
    void theOrderOfRulesValuesAggregationsAndUnitsDoesNotMatter() {
        String reordered = """
                  - name: other
                    entity: email
                    value: one
                    aggregations: [count]
                    units: [hour]
                    retention: P7D
                  - retention: PT840H
                    units: [day, hour]
                    aggregations: [max, count, sum]
                    value: amount
                    filter: {in: [DECLINED, APPROVED], field: status}
                    entity: customerId
                    name: spend
                """;
        for (String unit : List.of("hour", "day")) assertThat(only(reordered, unit)).isEqualTo(only(SPEND, unit));
    }

    @Test
    void theNameIsNotPartOfTheVersion() {
        assertThat(versions(SPEND.replace("name: spend", "name: spend-renamed")))
                .extracting(GradeVersion::version).isEqualTo(versions(SPEND).stream().map(GradeVersion::version).toList());
    }

    @Test
    void everythingThatDecidesValuesChangesTheVersion() {
        String day = only(SPEND, "day");
        List<String> edits = List.of(
                SPEND.replace("entity: customerId", "entity: email"),
                SPEND.replace("entity: customerId", "entity: customerId\n    qualifier: sku"),
                SPEND.replace("field: status", "field: channel"),
                SPEND.replace("in: [APPROVED, DECLINED]", "in: [APPROVED]"),
                SPEND.replace("    filter: {field: status, in: [APPROVED, DECLINED]}\n", ""),
                SPEND.replace("value: amount", "value: one").replace("sum, count, max", "sum, count"),
                SPEND.replace("sum, count, max", "sum, count, max, min"),
                SPEND.replace("retention: P35D", "retention: P36D"),
                SPEND.replace("retention: P35D", "retention: PT840H0.001S"));
        for (String edit : edits) assertThat(only(edit, "day")).as(edit).isNotEqualTo(day);
    }

    @Test
    void addingAUnitLeavesTheOtherUnitsVersions() {
        List<GradeVersion> more = versions(SPEND.replace("units: [hour, day]", "units: [minute, hour, day, month]"));
        assertThat(more).extracting(GradeVersion::grade).containsExactly("spend/minute", "spend/hour", "spend/day", "spend/month");
        assertThat(more.subList(1, 3)).isEqualTo(versions(SPEND));
    }

    @Test
    void aGradeReadsItsFieldsWhereTheSourcesPutThem() {
        Sources mapped = Sources.parse(DEFAULT_SOURCES_TEXT + "    fields: {customerId: customer.id}\n", "s");
        Sources sameByBrackets = Sources.parse(DEFAULT_SOURCES_TEXT + "    fields: {customerId: 'customer[id]'}\n", "s");
        Sources unused = Sources.parse(DEFAULT_SOURCES_TEXT + "    fields: {merchant: item.merchant}\n", "s");
        String byEmail = """
                  - name: by-email
                    entity: email
                    value: one
                    aggregations: [count]
                    units: [day]
                    retention: P7D
                """;
        assertThat(versions(SPEND, mapped)).isNotEqualTo(versions(SPEND));
        assertThat(versions(SPEND, sameByBrackets)).isEqualTo(versions(SPEND, mapped));
        // The rule names the path itself instead of the name mapped to it: the same values, the same version.
        assertThat(versions(SPEND.replace("entity: customerId", "entity: customer.id"), mapped)).isEqualTo(versions(SPEND, mapped));
        assertThat(versions(SPEND, unused)).isEqualTo(versions(SPEND));
        // required: [customerId] moved with the mapping, and a required field sends events to the DLQ for every rule.
        assertThat(versions(byEmail, mapped)).isNotEqualTo(versions(byEmail));
    }

    @Test
    void anotherSourceChangesEveryGrade() {
        Sources two = Sources.load("two-schema-sources.yaml");
        List<GradeVersion> one = versions(SPEND);
        List<GradeVersion> both = versions(SPEND, two);
        for (int i = 0; i < one.size(); i++) assertThat(both.get(i).version()).isNotEqualTo(one.get(i).version());
    }

    static final String DEFAULT_SOURCES_TEXT = """
            sources:
              - name: transactions
                topics: [transactions]
                record-name: io.tally.schemas.avro.TransactionEvent
                transaction-id: transactionId
                event-time: eventTime
                domain: domain
                amount: amount
                currency: currency
                required: [customerId]
            """;

    @Test
    void theSubjectStrategyIsNotPartOfTheVersion() {
        Sources plain = Sources.parse(DEFAULT_SOURCES_TEXT.replace("    record-name: io.tally.schemas.avro.TransactionEvent\n", ""), "s");
        assertThat(versions(SPEND, plain)).isEqualTo(versions(SPEND));
    }
}
