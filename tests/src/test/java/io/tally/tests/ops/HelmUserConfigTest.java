package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.config.Setting;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.replay.ReplaySettings;
import io.tally.ingest.source.RulesCheckCommand;
import io.tally.read.ReadSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart with a user's own rules, sources and a SASL_SSL Kafka: it renders and validates (kubeconform), mounts
 * both files in every role that reads them with the settings pointing at them, runs {@code rules check} before the
 * apps, rolls the pods when a file changes, and keeps every credential in the Secret: none appears in args, env
 * values, ConfigMaps or any other object, while the apps still get them (Kafka resolves its secret files).
 */
class HelmUserConfigTest {
    static final Path USER_RULES = OpsFiles.root().resolve("tests/src/test/resources/deploy/user-rules.yaml");
    static final Path USER_SOURCES = OpsFiles.root().resolve("rules/two-schema-sources.yaml");
    static final String JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"tally\" password=\"jaas-pw-7c1f\";";
    static final byte[] TRUSTSTORE = "truststore-bytes-9e2d".getBytes(StandardCharsets.UTF_8);
    static final byte[] KEYSTORE = "keystore-bytes-41aa".getBytes(StandardCharsets.UTF_8);
    /** Every credential the chart takes, each a value that occurs nowhere else. */
    static final Map<String, String> KAFKA_SECRETS = Map.of("sasl.jaas.config", JAAS, "ssl.truststore.password", "truststore-pw-5b0e",
            "ssl.keystore.password", "keystore-pw-d3c9", "ssl.key.password", "key-pw-0f61");
    static final String COSMOS_KEY = "cosmos-key-8d4a", CLIENT_SECRET = "client-secret-2e7b", API_KEYS = "api-key-6c13",
            REGISTRY_USER_INFO = "sr-user:sr-pw-a90c";

    /** A user's values: their rules and sources, SASL_SSL with SCRAM, a trust store and a key store, registry basic auth. */
    static Map<String, Object> userValues() throws IOException {
        Map<String, Object> kafkaSettings = new LinkedHashMap<>(Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512",
                "ssl.truststore.type", "PKCS12", "ssl.keystore.type", "PKCS12"));
        Map<String, Object> secrets = new LinkedHashMap<>();
        secrets.put("cosmosKey", COSMOS_KEY);
        secrets.put("readApiKeys", API_KEYS);
        secrets.put("registryUserInfo", REGISTRY_USER_INFO);
        secrets.put("kafka", KAFKA_SECRETS);
        secrets.put("kafkaTruststore", Base64.getEncoder().encodeToString(TRUSTSTORE));
        secrets.put("kafkaKeystore", Base64.getEncoder().encodeToString(KEYSTORE));
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("kafka", Map.of("clientSettings", kafkaSettings));
        values.put("rules", Map.of("rulesYaml", Files.readString(USER_RULES), "sourcesYaml", Files.readString(USER_SOURCES)));
        values.put("secrets", secrets);
        return values;
    }

    static Path valuesFile(Path dir, Map<String, Object> values) throws IOException {
        Files.createDirectories(dir);
        Path file = Files.createTempFile(dir, "values-", ".yaml");
        RenderedChart.YAML.writeValue(file.toFile(), values);
        return file;
    }

    static RenderedChart renderUser(Path dir, Map<String, Object> changes) throws IOException {
        Map<String, Object> values = userValues();
        values.putAll(changes);
        return RenderedChart.render("-f", valuesFile(dir, values).toString());
    }

    /** The replay Job of a range, beside the live workloads. */
    static final Map<String, Object> REPLAY = Map.of("replay", Map.of("enabled", true, "from", "2026-11-20T00:00:00Z", "to", "2026-11-21T00:00:00Z"));

    @Test
    void rendersAndValidatesWithTheUsersRulesSourcesAndSaslSsl(@TempDir Path dir) throws IOException {
        renderUser(dir, REPLAY).assertValid(dir.resolve("kubeconform"));
    }

    /**
     * Aggregation and sink read the rules and the sources (ingest.rules.file, ingest.sources.file), read-service the
     * rules (read.rules-file); each setting names a file of a mounted volume, and that file is the user's, byte for byte.
     */
    @Test
    void everyRoleThatReadsTheFilesMountsThemAndPointsItsSettingsThere(@TempDir Path dir) throws IOException {
        RenderedChart chart = renderUser(dir, REPLAY);
        String rules = Files.readString(USER_RULES), sources = Files.readString(USER_SOURCES);
        String replay = chart.kind("Job").stream().map(j -> j.path("metadata").path("name").asText()).filter(n -> n.startsWith("tally-replay-"))
                .findFirst().orElseThrow();
        Map<String, Map<String, String>> expected = Map.of(
                replay + "/replay", Map.of("TALLY_INGEST_RULES_FILE", rules, "TALLY_INGEST_SOURCES_FILE", sources),
                replay + "/rules-check", Map.of("TALLY_INGEST_RULES_FILE", rules, "TALLY_INGEST_SOURCES_FILE", sources),
                "tally-aggregation/ingest-app", Map.of("TALLY_INGEST_RULES_FILE", rules, "TALLY_INGEST_SOURCES_FILE", sources),
                "tally-aggregation/rules-check", Map.of("TALLY_INGEST_RULES_FILE", rules, "TALLY_INGEST_SOURCES_FILE", sources),
                "tally-sink/ingest-app", Map.of("TALLY_INGEST_RULES_FILE", rules, "TALLY_INGEST_SOURCES_FILE", sources),
                "tally-sink/rules-check", Map.of("TALLY_INGEST_RULES_FILE", rules, "TALLY_INGEST_SOURCES_FILE", sources),
                "tally-read/read-service", Map.of("TALLY_READ_RULES_FILE", rules));
        for (var e : expected.entrySet()) {
            String[] where = e.getKey().split("/");
            PodProcess pod = PodProcess.of(chart, where[0], where[1], dir.resolve("pods"));
            e.getValue().forEach((variable, content) -> {
                String file = pod.env().get(variable);
                assertThat(file).as("%s: %s", e.getKey(), variable).isNotNull();
                assertThat(pod.mounts().values()).as("%s: %s=%s is on a mounted volume", e.getKey(), variable, file)
                        .anyMatch(m -> Path.of(file).startsWith(m));
                assertThat(Path.of(file)).as("%s: %s", e.getKey(), variable).hasContent(content);
            });
        }
        // The settings the apps load are those files.
        PodProcess aggregation = PodProcess.of(chart, "tally-aggregation", "ingest-app", dir.resolve("load"));
        IngestSettings ingest = IngestSettings.load(aggregation.args().toArray(String[]::new), aggregation.env());
        assertThat(Path.of(ingest.aggregation().rulesLocation())).hasContent(rules);
        assertThat(Path.of(ingest.aggregation().sourcesLocation())).hasContent(sources);
        PodProcess read = PodProcess.of(chart, "tally-read", "read-service", dir.resolve("load"));
        assertThat(Path.of(ReadSettings.load(read.args().toArray(String[]::new), read.env()).rulesLocation())).hasContent(rules);
        PodProcess replayPod = PodProcess.of(chart, replay, "replay", dir.resolve("load"));
        assertThat(replayPod.args().get(0)).isEqualTo("replay");
        ReplaySettings replaySettings = ReplaySettings.load(replayPod.args().subList(1, replayPod.args().size()).toArray(String[]::new),
                replayPod.env(), java.time.Instant.parse("2027-06-01T00:00:00Z"));
        assertThat(Path.of(replaySettings.ingest().aggregation().rulesLocation())).hasContent(rules);
        assertThat(Path.of(replaySettings.ingest().aggregation().sourcesLocation())).hasContent(sources);
    }

    /** The init container is `rules check` with only settings that command declares, before the app in every ingest-app pod. */
    @Test
    void rulesCheckRunsBeforeEveryIngestAppPodWithItsOwnSettings(@TempDir Path dir) throws IOException {
        RenderedChart chart = renderUser(dir, REPLAY);
        // aggregation, sink, read, the replay, and a rules change's apply hook and backfill
        assertThat(chart.workloads()).hasSize(6);
        Set<String> declared = RulesCheckCommand.SETTINGS.stream().map(Setting::envName).collect(Collectors.toSet());
        for (JsonNode workload : chart.workloads()) {
            String name = workload.path("metadata").path("name").asText();
            if (name.equals("tally-read")) continue;
            JsonNode pod = RenderedChart.podSpec(workload);
            JsonNode init = pod.path("initContainers");
            assertThat(init).as("%s init containers", name).hasSize(1);
            assertThat(RenderedChart.strings(init.path(0).path("args"))).isEqualTo(List.of("rules", "check"));
            assertThat(init.path(0).path("image").asText()).isEqualTo(pod.path("containers").path(0).path("image").asText());
            RenderedChart.env(init.path(0)).keySet().stream().filter(k -> k.startsWith("TALLY_"))
                    .forEach(k -> assertThat(declared).as("%s rules-check gets %s", name, k).contains(k));
        }
        JsonNode read = RenderedChart.podSpec(chart.one("Deployment", "tally-read"));
        assertThat(read.path("initContainers").isMissingNode()).as("read-service talks to no registry").isTrue();
        // Without files of the user's there is nothing to check beyond what the image was built with.
        RenderedChart shipped = RenderedChart.render("--set", "secrets.cosmosKey=k", "--set", "secrets.readApiKeys=a");
        assertThat(shipped.workloads()).allSatisfy(w -> assertThat(RenderedChart.podSpec(w).path("initContainers").isMissingNode()).isTrue());
    }

    /** helm upgrade rolls every pod when the rules or the sources change, and none when nothing does. */
    @Test
    void aChangeOfRulesOrSourcesRollsEveryPod(@TempDir Path dir) throws IOException {
        Map<String, JsonNode> before = podAnnotations(renderUser(dir, Map.of()));
        assertThat(before).as("annotations of every workload").hasSize(3).allSatisfy((w, a) -> assertThat(a.isObject()).as(w).isTrue());
        assertThat(podAnnotations(renderUser(dir, Map.of()))).as("the same values again").isEqualTo(before);
        String otherRules = Files.readString(USER_RULES).replace("retention: P7D", "retention: P8D");
        Map<String, JsonNode> rulesChanged = podAnnotations(renderUser(dir, Map.of("rules",
                Map.of("rulesYaml", otherRules, "sourcesYaml", Files.readString(USER_SOURCES)))));
        Map<String, JsonNode> sourcesChanged = podAnnotations(renderUser(dir, Map.of("rules",
                Map.of("rulesYaml", Files.readString(USER_RULES), "sourcesYaml", Files.readString(USER_SOURCES) + "# changed\n"))));
        assertThat(before.keySet()).containsExactlyInAnyOrder("tally-aggregation", "tally-sink", "tally-read");
        for (String workload : before.keySet()) {
            assertThat(rulesChanged.get(workload)).as("%s after a rules change", workload).isNotEqualTo(before.get(workload));
            assertThat(sourcesChanged.get(workload)).as("%s after a sources change", workload).isNotEqualTo(before.get(workload));
        }
    }

    /**
     * Every credential set at once (twice: the Cosmos key, then a service principal's secret): none of their values,
     * nor the key stores' bytes, appears in any object but the Secret, which holds each of them.
     */
    @Test
    void noSecretValueAppearsOutsideTheSecret(@TempDir Path dir) throws IOException {
        RenderedChart withKey = renderUser(dir, Map.of());
        RenderedChart withClientSecret = renderUser(dir, Map.of(
                "cosmos", Map.of("auth", "service-principal-secret"),
                "workloadIdentity", Map.of("clientId", "00000000-0000-0000-0000-0000000000aa", "tenantId", "tenant-1"),
                "secrets", merged(userSecrets(), Map.of("cosmosClientSecret", CLIENT_SECRET))));
        for (RenderedChart chart : List.of(withKey, withClientSecret)) {
            List<String> values = new ArrayList<>(List.of(API_KEYS, REGISTRY_USER_INFO, "sr-pw-a90c", "jaas-pw-7c1f",
                    new String(TRUSTSTORE, StandardCharsets.UTF_8), new String(KEYSTORE, StandardCharsets.UTF_8),
                    Base64.getEncoder().encodeToString(TRUSTSTORE), Base64.getEncoder().encodeToString(KEYSTORE)));
            values.addAll(KAFKA_SECRETS.values());
            values.add(chart == withKey ? COSMOS_KEY : CLIENT_SECRET);
            JsonNode secret = chart.one("Secret", "tally-secrets");
            String secretText = secret.toString();
            for (String v : values.subList(0, 3)) assertThat(secretText).as("the Secret holds it").contains(v.replace("\"", "\\\""));
            assertThat(chart.objects()).filteredOn(o -> !o.path("kind").asText().equals("Secret")).allSatisfy(o -> {
                String text = o.toString();
                for (String v : values) {
                    assertThat(text).as("%s %s contains a secret value", o.path("kind").asText(), o.path("metadata").path("name").asText())
                            .doesNotContain(v).doesNotContain(v.replace("\"", "\\\""));
                }
            });
        }
    }

    /**
     * The Kafka settings that hold a secret reach the clients: Kafka's own config resolves each flag's file reference
     * to the Secret's value, and the key stores' locations are the Secret's bytes.
     */
    @Test
    void kafkaResolvesItsSecretSettingsFromTheMountedFiles(@TempDir Path dir) throws IOException {
        RenderedChart chart = renderUser(dir, Map.of());
        for (String workload : List.of("tally-aggregation", "tally-sink")) {
            PodProcess pod = PodProcess.of(chart, workload, "ingest-app", dir.resolve("pods"));
            assertThat(String.join(" ", pod.args())).doesNotContain("pw-");
            var kafka = IngestSettings.load(pod.args().toArray(String[]::new), pod.env()).kafka();
            Map<String, Object> consumer = new HashMap<>(kafka.consumerConfig());
            consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            Map<String, Object> producer = new HashMap<>(kafka.producerConfig());
            producer.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
            producer.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
            // Every client ingest-app makes: the sink's consumer, its dead-letter producer, the topic admin, Kafka Streams.
            Map<String, Object> streams = new HashMap<>(kafka.streams());
            streams.put(StreamsConfig.APPLICATION_ID_CONFIG, "t");
            streams.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            for (AbstractConfig resolved : List.of(new ConsumerConfig(consumer), new ProducerConfig(producer),
                    new AdminClientConfig(kafka.adminConfig(java.time.Duration.ofSeconds(30))), new StreamsConfig(streams))) {
                String client = workload + " " + resolved.getClass().getSimpleName();
                KAFKA_SECRETS.forEach((k, v) -> {
                    Object value = resolved.originals().get(k);
                    assertThat(value instanceof org.apache.kafka.common.config.types.Password p ? p.value() : String.valueOf(value))
                            .as("%s %s", client, k).isEqualTo(v);
                });
                assertThat(Path.of(String.valueOf(resolved.originals().get("ssl.truststore.location")))).as(client).hasBinaryContent(TRUSTSTORE);
                assertThat(Path.of(String.valueOf(resolved.originals().get("ssl.keystore.location")))).as(client).hasBinaryContent(KEYSTORE);
                assertThat(resolved.originals().get("security.protocol")).as(client).isEqualTo("SASL_SSL");
            }
            assertThat(pod.env().get("TALLY_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO")).isEqualTo(REGISTRY_USER_INFO);
        }
    }

    /** Secret files are mode 0440: every pod that mounts them runs as the image's user with that group as fsGroup. */
    @Test
    void theImagesUserCanReadTheKafkaSecretFiles(@TempDir Path dir) throws IOException {
        RenderedChart chart = renderUser(dir, REPLAY);
        String user = java.nio.file.Files.readAllLines(OpsFiles.root().resolve("docker/app.Dockerfile")).stream()
                .filter(l -> l.startsWith("USER ")).map(l -> l.substring(5).trim()).findFirst().orElseThrow();
        List<JsonNode> mounting = chart.workloads().stream()
                .filter(w -> RenderedChart.podSpec(w).path("volumes").toString().contains("\"kafka-secrets\"")).toList();
        assertThat(mounting).as("workloads with Kafka's secret files: aggregation, sink, replay, backfill").hasSize(4);
        for (JsonNode w : mounting) {
            JsonNode security = RenderedChart.podSpec(w).path("securityContext");
            assertThat(security.path("runAsUser").asText() + ":" + security.path("fsGroup").asText())
                    .as("%s user:fsGroup", w.path("metadata").path("name").asText()).isEqualTo(user);
        }
    }

    /** With a Secret of the user's, the chart renders none and points at the keys the values say it holds. */
    @Test
    void anExistingSecretServesTheKafkaFilesAndTheRegistryLogin(@TempDir Path dir) throws IOException {
        RenderedChart chart = RenderedChart.render("-f", valuesFile(dir, Map.of(
                "kafka", Map.of("clientSettings", Map.of("security.protocol", "SASL_SSL"), "secretSettings", List.of("sasl.jaas.config"),
                        "truststore", true),
                "schemaRegistry", Map.of("basicAuth", true),
                "secrets", Map.of("existingSecret", "vault-tally"))).toString());
        assertThat(chart.kind("Secret")).isEmpty();
        for (String name : List.of("tally-aggregation", "tally-sink")) {
            JsonNode pod = RenderedChart.podSpec(chart.workloads().stream()
                    .filter(w -> w.path("metadata").path("name").asText().equals(name)).findFirst().orElseThrow());
            JsonNode volume = pod.path("volumes").findParent("secret").path("secret");
            assertThat(volume.path("secretName").asText()).isEqualTo("vault-tally");
            assertThat(volume.path("items").findValuesAsText("key")).containsExactlyInAnyOrder("kafka.sasl.jaas.config", "kafka-truststore");
            assertThat(pod.path("containers").path(0).path("env").findValues("secretKeyRef").stream().map(r -> r.path("key").asText()))
                    .contains("schema-registry-user-info");
        }
    }

    /** A secret in the plain flags, or a key store as a setting value, is refused at render time. */
    @Test
    void secretsInTheWrongPlaceFailAtRenderTime(@TempDir Path dir) throws IOException {
        OpsTools.Run both = RenderedChart.helm("template", "tally", OpsFiles.chart().toString(), "-f", valuesFile(dir, Map.of(
                "kafka", Map.of("clientSettings", Map.of("sasl.jaas.config", "x")),
                "secrets", merged(userSecrets(), Map.of("kafka", Map.of("sasl.jaas.config", "y"))))).toString());
        assertThat(both.exitCode()).as(both.output()).isNotZero();
        assertThat(both.output()).contains("kafka.clientSettings.sasl.jaas.config is also a secret setting");
        OpsTools.Run location = RenderedChart.helm("template", "tally", OpsFiles.chart().toString(), "-f", valuesFile(dir, Map.of(
                "secrets", merged(userSecrets(), Map.of("kafka", Map.of("ssl.truststore.location", "/x"))))).toString());
        assertThat(location.exitCode()).as(location.output()).isNotZero();
        assertThat(location.output()).contains("a key store is a file");
    }

    private static Map<String, Object> userSecrets() throws IOException {
        @SuppressWarnings("unchecked")
        Map<String, Object> secrets = (Map<String, Object>) userValues().get("secrets");
        return secrets;
    }

    private static Map<String, Object> merged(Map<String, Object> a, Map<String, Object> b) {
        Map<String, Object> out = new LinkedHashMap<>(a);
        out.putAll(b);
        return out;
    }

    /** The pod annotations of the long-running workloads (a Job's pods run once: they have nothing to roll). */
    private static Map<String, JsonNode> podAnnotations(RenderedChart chart) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        chart.workloads().stream().filter(w -> !w.path("kind").asText().equals("Job")).forEach(w -> out.put(w.path("metadata").path("name").asText(),
                w.path("spec").path("template").path("metadata").path("annotations")));
        return out;
    }
}
