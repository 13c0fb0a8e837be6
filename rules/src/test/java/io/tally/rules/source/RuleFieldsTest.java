package io.tally.rules.source;

import static io.tally.rules.source.SourceFixtures.ruleFields;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RuleFieldsTest {
    private static final RuleFields FIELDS = ruleFields("""
              - {name: spend, entity: customerId, qualifier: sku, filter: {field: status, in: [APPROVED]}, value: amount,
                 aggregations: [sum], units: [day], retention: P1D}
              - {name: web, entity: email, filter: {field: channel, in: [WEB]}, value: one,
                 aggregations: [count], units: [day], retention: P1D}
              - {name: by-status, entity: status, value: one, aggregations: [count], units: [day], retention: P1D}
              - {name: by-device, entity: 'attributes[device.id]', filter: {field: channel, in: [WEB]}, value: one,
                 aggregations: [count], units: [day], retention: P1D}""");

    @Test
    void slotsFollowFirstUseAndEachNameHasOne() {
        assertThat(FIELDS.names()).containsExactly("customerId", "sku", "status", "email", "channel", "attributes[device.id]");
        for (int i = 0; i < FIELDS.names().size(); i++) assertThat(FIELDS.slot(FIELDS.names().get(i))).isEqualTo(i);
        assertThatThrownBy(() -> FIELDS.slot("merchant")).hasMessage("no rule uses a field named merchant");
    }

    @Test
    void entitiesAndQualifiersAreKeysAndFilterOnlyFieldsAreNot() {
        assertThat(FIELDS.isKey(FIELDS.slot("customerId"))).isTrue();
        assertThat(FIELDS.isKey(FIELDS.slot("sku"))).isTrue();
        assertThat(FIELDS.isKey(FIELDS.slot("email"))).isTrue();
        assertThat(FIELDS.isKey(FIELDS.slot("channel"))).isFalse();
    }

    @Test
    void aFilterFieldThatAnotherRuleKeysByIsAKey() {
        assertThat(FIELDS.isKey(FIELDS.slot("status"))).isTrue();
    }

    @Test
    void usesOfNamesEveryRuleAndHowInRuleOrder() {
        assertThat(FIELDS.usesOf("status")).isEqualTo("filter of rule spend, entity of rule by-status");
        assertThat(FIELDS.usesOf("channel")).isEqualTo("filter of rule web, filter of rule by-device");
        assertThat(FIELDS.usesOf("sku")).isEqualTo("qualifier of rule spend");
        assertThat(FIELDS.usesOf("merchant")).isEmpty();
    }
}
