package io.tally.tests.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.serde.RegistryClientSettings;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.KafkaBrokerProcess;
import io.tally.testsupport.kafka.KafkaBrokerProcess.SaslSsl;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole pipeline as it runs against a managed Kafka and a managed registry: the broker's only client listener is
 * SASL_SSL with SCRAM-SHA-512 logins, the schema registry answers only HTTPS with basic auth. loadgen, ingest-app
 * (aggregation and sink in one child JVM) and the harness's own clients get the security as the README tells a user
 * to (`--kafka.*` pass-through, `schema.registry.basic-auth.user-info`), and every bucket and the DLQ end equal to the
 * ground truth. A wrong password is refused by both.
 *
 * <p>TLS uses the local Cosmos endpoint's self-signed certificate for 127.0.0.1 (its truststore is already the test
 * JVM's and its children's), so one CA is trusted everywhere, as one corporate CA would be.
 */
class SecureKafkaRegistryIT {
    static final Duration CONVERGE = Duration.ofMinutes(4);

    @Test
    void thePipelineRunsOverSaslSslAndAnHttpsRegistryWithBasicAuth(@TempDir Path dir) throws Exception {
        LocalCosmos cosmos = LocalCosmos.get();
        // loadgen runs in this JVM, and its registry client takes the JVM's default SSL context, which may have been
        // made before LocalCosmos pointed javax.net.ssl.trustStore at the local certificate (child JVMs get it at start).
        javax.net.ssl.SSLContext.setDefault(cosmos.sslContext());
        Path tls = Path.of(cosmos.control().health().get("truststore").asText()).getParent();
        Path brokerPem = dir.resolve("broker.pem"); // Kafka's PEM key store: the private key, then the certificate
        Files.writeString(brokerPem, Files.readString(tls.resolve("key.pem")) + Files.readString(tls.resolve("cert.pem")));
        String kafkaPassword = UUID.randomUUID().toString();
        SaslSsl security = new SaslSsl(brokerPem, tls.resolve("truststore.p12"), LocalCosmos.TRUSTSTORE_PASSWORD,
                Map.of("tally", kafkaPassword));
        String registryPassword = UUID.randomUUID().toString();

        try (KafkaBrokerProcess broker = KafkaBrokerProcess.start(dir.resolve("broker"), security)) {
            LocalSchemaRegistry registry = LocalSchemaRegistry.startSecure(dir.resolve("registry"), tls.resolve("cert.pem"),
                    tls.resolve("key.pem"), "tally-sr", registryPassword, cosmos.sslContext());
            assertThat(registry.url()).startsWith("https://");

            Map<String, String> client = security.clientSettings("tally");
            List<String> flags = new ArrayList<>();
            client.forEach((k, v) -> flags.add("--kafka." + k + "=" + v));
            flags.add("--" + RegistryClientSettings.USER_INFO.key() + "=tally-sr:" + registryPassword);
            String[] secure = flags.toArray(String[]::new);

            try (Pipeline p = new Pipeline("secure", broker.bootstrapServers(), registry, cosmos, dir)
                    .withKafkaClientSettings(client)) {
                p.provisionTopics();
                p.start("secure-1", "both", secure);
                p.awaitReady(Pipeline.START_TIMEOUT);
                Pipeline.Truth truth = p.produceInBackground(p.loadgen(1500, 500, 27, secure)).get(3, TimeUnit.MINUTES);
                truth.assertExercisesEverything();
                p.awaitConverged(truth, CONVERGE);
            }

            // The credentials are checked, not merely accepted: a wrong password fails at both.
            Map<String, Object> wrongKafka = new HashMap<>(security.clientSettings("tally"));
            wrongKafka.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required "
                    + "username=\"tally\" password=\"wrong\";");
            wrongKafka.put("bootstrap.servers", broker.bootstrapServers());
            wrongKafka.put("request.timeout.ms", 5_000);
            wrongKafka.put("default.api.timeout.ms", 10_000);
            try (Admin admin = Admin.create(wrongKafka)) {
                assertThatThrownBy(() -> admin.describeCluster().nodes().get(20, TimeUnit.SECONDS))
                        .hasRootCauseInstanceOf(org.apache.kafka.common.errors.SaslAuthenticationException.class);
            }
            SchemaRegistryClient wrongRegistry = new SchemaRegistryClient(RegistryClientSettings.forUrls(registry.url(), "tally-sr:wrong"));
            assertThatThrownBy(() -> wrongRegistry.latest("tally-auth-check")).hasMessageContaining("not authenticated");
        }
    }
}
