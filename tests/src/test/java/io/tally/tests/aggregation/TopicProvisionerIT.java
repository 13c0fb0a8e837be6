package io.tally.tests.aggregation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.Topics;
import io.tally.schemas.topics.TopicProvisioner;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.kafka.TestKafka;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Topic provisioning on a real broker: missing topics are created as specified, misconfigured ones stop the start. */
@ExtendWith(LocalStackExtension.class)
class TopicProvisionerIT {
    @Test
    void createsMissingTopicsWithTheirPartitionsAndConfigs(TestKafka kafka) throws Exception {
        Topics.Names names = Topics.Names.withPrefix("prov-" + UUID.randomUUID().toString().substring(0, 8) + ".");
        try (Admin admin = kafka.admin()) {
            new TopicProvisioner(admin).ensure(Topics.specs(names), true);
            Map<String, TopicDescription> d = admin.describeTopics(List.of(names.transactions(), names.bucketUpdates())).allTopicNames().get();
            assertThat(d.get(names.transactions()).partitions()).hasSize(6);
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, names.bucketUpdates());
            assertThat(admin.describeConfigs(List.of(r)).all().get().get(r).get("cleanup.policy").value()).isEqualTo("compact");
            new TopicProvisioner(admin).ensure(Topics.specs(names), true); // a second start finds them as they should be
        }
    }

    @Test
    void refusesABucketUpdatesTopicThatIsNotCompactedAndAMissingTopicWhenCreationIsOff(TestKafka kafka) {
        Topics.Names names = Topics.Names.withPrefix("prov-bad-" + UUID.randomUUID().toString().substring(0, 8) + ".");
        kafka.createTopics(List.of(TestKafka.topic(names.bucketUpdates(), 6, Map.of("cleanup.policy", "delete"))));
        try (Admin admin = kafka.admin()) {
            assertThatThrownBy(() -> new TopicProvisioner(admin).ensure(Topics.specs(names), false))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("topic " + names.bucketUpdates() + " has cleanup.policy=delete; Tally needs compact")
                    .hasMessageContaining("topic " + names.transactions() + " does not exist")
                    .hasMessageContaining("topics.create-missing=true");
        }
    }
}
