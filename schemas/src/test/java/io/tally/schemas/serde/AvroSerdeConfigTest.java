package io.tally.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class AvroSerdeConfigTest {

    @Test
    void defaultsMatchConfluents() {
        AvroSerdeConfig c = AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://reg:8081"));
        assertThat(c.autoRegister()).isTrue();
        assertThat(c.useLatestVersion()).isFalse();
        assertThat(c.specificReader()).isFalse();
        assertThat(c.logicalTypeConverters()).isFalse();
        RegistryClientSettings r = c.registry();
        assertThat(r.urls()).containsExactly(URI.create("http://reg:8081/"));
        assertThat(r.userInfo()).isEmpty();
        assertThat(r.retry()).isEqualTo(RetryPolicy.DEFAULT);
        assertThat(r.cacheCapacity()).isEqualTo(1000);
        assertThat(r.latestCacheTtl()).isNull();
    }

    @Test
    void readsStringsAndTypedValues() {
        Map<String, Object> m = new HashMap<>();
        m.put("schema.registry.url", " http://a:8081 , https://b:8082/prefix ");
        m.put("auto.register.schemas", "FALSE");
        m.put("use.latest.version", true);
        m.put("specific.avro.reader", "true");
        m.put("max.retries", 5);
        m.put("retries.wait.ms", "10");
        m.put("retries.max.wait.ms", "50");
        m.put("latest.cache.ttl.sec", "30");
        m.put("http.read.timeout.ms", 2500);
        m.put("missing.id.cache.ttl.sec", "45");
        m.put("missing.cache.size", 50);
        AvroSerdeConfig c = AvroSerdeConfig.parse(m);
        assertThat(c.autoRegister()).isFalse();
        assertThat(c.useLatestVersion()).isTrue();
        assertThat(c.specificReader()).isTrue();
        assertThat(c.registry().urls()).containsExactly(URI.create("http://a:8081/"), URI.create("https://b:8082/prefix/"));
        assertThat(c.registry().retry()).isEqualTo(new RetryPolicy(5, Duration.ofMillis(10), Duration.ofMillis(50)));
        assertThat(c.registry().latestCacheTtl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.registry().requestTimeout()).isEqualTo(Duration.ofMillis(2500));
        assertThat(c.registry().missingIdCacheTtl()).isEqualTo(Duration.ofSeconds(45));
        assertThat(c.registry().missingCacheSize()).isEqualTo(50);
    }

    @Test
    void missingIdsAreAskedForEveryTimeUnlessATtlIsSet() {
        AvroSerdeConfig c = AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://reg:8081"));
        assertThat(c.registry().missingIdCacheTtl()).isZero();
    }

    @Test
    void userInfoInTheUrlBecomesBasicAuthAndLeavesTheUrl() {
        AvroSerdeConfig c = AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://fraud%40team:s3cr%3At@reg:8081"));
        assertThat(c.registry().urls()).containsExactly(URI.create("http://reg:8081/"));
        assertThat(c.registry().userInfo()).hasValue("fraud@team:s3cr:t");
        assertThat(c.registry().toString()).doesNotContain("s3cr").contains("basicAuth=true");
    }

    @Test
    void userInfoSourceTakesTheExplicitCredentialsAndIgnoresTheUrls() {
        AvroSerdeConfig c = AvroSerdeConfig.parse(Map.of(
                "schema.registry.url", "http://ignored:pw@reg:8081",
                "basic.auth.credentials.source", "USER_INFO",
                "basic.auth.user.info", "svc:pw2"));
        assertThat(c.registry().userInfo()).hasValue("svc:pw2");
        AvroSerdeConfig alias = AvroSerdeConfig.parse(Map.of(
                "schema.registry.url", "http://reg:8081",
                "basic.auth.credentials.source", "user_info",
                "schema.registry.basic.auth.user.info", "svc:pw3"));
        assertThat(alias.registry().userInfo()).hasValue("svc:pw3");
    }

    @Test
    void listsEveryProblemAtOnceWithoutLeakingPasswords() {
        Map<String, Object> m = new HashMap<>();
        m.put("schema.registry.url", "ftp://user:hunter2@reg, http://ok:8081");
        m.put("auto.register.schemas", "yes");
        m.put("max.retries", "-1");
        m.put("retries.wait.ms", "soon");
        m.put("basic.auth.credentials.source", "SASL_INHERIT");
        m.put("value.subject.name.strategy", "com.example.TenantNameStrategy");
        assertThatThrownBy(() -> AvroSerdeConfig.parse(m))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("auto.register.schemas=yes is not true or false")
                .hasMessageContaining("max.retries=-1 must be >= 0")
                .hasMessageContaining("retries.wait.ms=soon is not an integer")
                .hasMessageContaining("SASL_INHERIT is not supported")
                .hasMessageContaining("value.subject.name.strategy: 'com.example.TenantNameStrategy' is not a subject name strategy")
                .hasMessageContaining("ftp://***@reg")
                .hasMessageNotContaining("hunter2");
    }

    @Test
    void requiresAUrlUnlessTheCallerHasAClient() {
        assertThatThrownBy(() -> AvroSerdeConfig.parse(Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("schema.registry.url is required");
        assertThat(AvroSerdeConfig.parse(Map.of(), false).registry()).isNull();
    }

    @Test
    void useLatestVersionNeedsAutoRegisterOff() {
        assertThatThrownBy(() -> AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://r", "use.latest.version", "true")))
                .hasMessageContaining("use.latest.version=true needs auto.register.schemas=false");
    }

    @Test
    void userInfoSourceWithoutCredentialsIsAnError() {
        assertThatThrownBy(() -> AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://r",
                "basic.auth.credentials.source", "USER_INFO")))
                .hasMessageContaining("needs basic.auth.user.info as user:password");
    }

    @Test
    void topicNameStrategySubjects() {
        assertThat(AvroSerdeConfig.subject("transactions", false)).isEqualTo("transactions-value");
        assertThat(AvroSerdeConfig.subject("transactions", true)).isEqualTo("transactions-key");
        assertThat(RegistryClientSettings.forUrls("http://a,http://b").urls()).hasSize(2);
        assertThat(List.of(AvroSerdeConfig.redact("http://u:p@h:1/x"))).containsExactly("http://***@h:1/x");
    }

    @Test
    void subjectNameStrategiesDefaultToTopicName() {
        AvroSerdeConfig c = AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://r"));
        assertThat(c.keySubjectStrategy()).isEqualTo(SubjectNameStrategy.TOPIC_NAME);
        assertThat(c.valueSubjectStrategy()).isEqualTo(SubjectNameStrategy.TOPIC_NAME);
        assertThat(AvroSerdeConfig.parse(Map.of(), false).valueSubjectStrategy()).isEqualTo(SubjectNameStrategy.TOPIC_NAME);
    }

    @Test
    void subjectNameStrategiesAreReadFromClassNamesClassesAndShortNames() {
        AvroSerdeConfig fullNames = AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://r",
                "key.subject.name.strategy", "io.confluent.kafka.serializers.subject.RecordNameStrategy",
                "value.subject.name.strategy", " io.confluent.kafka.serializers.subject.TopicRecordNameStrategy "));
        assertThat(fullNames.keySubjectStrategy()).isEqualTo(SubjectNameStrategy.RECORD_NAME);
        assertThat(fullNames.valueSubjectStrategy()).isEqualTo(SubjectNameStrategy.TOPIC_RECORD_NAME);

        // Code that has Confluent's jar configures the class itself.
        AvroSerdeConfig classes = AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://r",
                "value.subject.name.strategy", io.confluent.kafka.serializers.subject.TopicRecordNameStrategy.class));
        assertThat(classes.valueSubjectStrategy()).isEqualTo(SubjectNameStrategy.TOPIC_RECORD_NAME);

        AvroSerdeConfig shortNames = AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://r",
                "key.subject.name.strategy", "topic-name", "value.subject.name.strategy", "RecordNameStrategy"));
        assertThat(shortNames.keySubjectStrategy()).isEqualTo(SubjectNameStrategy.TOPIC_NAME);
        assertThat(shortNames.valueSubjectStrategy()).isEqualTo(SubjectNameStrategy.RECORD_NAME);
    }

    @Test
    void unknownSubjectNameStrategiesAreRejectedNamingTheAcceptedValues() {
        assertThatThrownBy(() -> AvroSerdeConfig.parse(Map.of("schema.registry.url", "http://r",
                "key.subject.name.strategy", String.class,
                "value.subject.name.strategy", "io.confluent.kafka.serializers.subject.AssociatedNameStrategy")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("key.subject.name.strategy: 'java.lang.String' is not a subject name strategy")
                .hasMessageContaining("value.subject.name.strategy: 'io.confluent.kafka.serializers.subject."
                        + "AssociatedNameStrategy' is not a subject name strategy")
                .hasMessageContaining("topic-name, record-name or topic-record-name")
                .hasMessageContaining("TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy");
    }
}
