package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.KafkaBrokerProcess;
import io.tally.testsupport.kafka.KafkaBrokerProcess.SaslSsl;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.process.Ports;
import io.tally.testsupport.process.Processes;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's pods as they would run, without a cluster: the chart is rendered with a user's rules (grades the shipped
 * rules do not have), the two-schema sources file, a SASL_SSL broker with SCRAM, an HTTPS registry with basic auth and
 * the Cosmos key, every credential in the Secret. Each rendered container then runs here with its exact args, env and
 * mounted files ({@link PodProcess}) on the module's jar, as the image's entry point runs it: first the
 * {@code rules-check} init container, the {@code rules-apply} hook (the user's rules become the deployment's record), then
 * the aggregation, the sink and read-service. Every bucket in Cosmos must equal
 * loadgen's ground truth, computed with the user's rules from events on both topics; read-service must answer for the
 * user's grades and refuse the shipped ones; and a rules file that does not fit the schemas must fail the init
 * container.
 *
 * <p>What cannot run here: a Kubernetes API server, a kubelet or a container runtime, so scheduling, probes, the
 * Secret's and ConfigMap's projection by the kubelet and the image itself are not exercised (HelmChartTest and
 * HelmUserConfigTest check the manifests). The stand-ins: mount paths become scratch directories holding the same
 * files; the JVM trusts the local stack's one CA ({@code javax.net.ssl.trustStore}, as the local Cosmos endpoint and the
 * registry use it) where a pod would trust a public one; addresses and ports are this machine's.
 */
class RenderedPodsIT {
    static final Duration CONVERGE = Duration.ofMinutes(5);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void theRenderedPodsCountTheUsersGradesFromBothTopicsOverSaslSsl(@TempDir Path dir) throws Exception {
        LocalCosmos cosmos = LocalCosmos.get();
        javax.net.ssl.SSLContext.setDefault(cosmos.sslContext()); // loadgen's registry client in this JVM
        Path tls = Path.of(cosmos.control().health().get("truststore").asText()).getParent();
        Path brokerPem = dir.resolve("broker.pem");
        Files.writeString(brokerPem, Files.readString(tls.resolve("key.pem")) + Files.readString(tls.resolve("cert.pem")));
        String kafkaPassword = UUID.randomUUID().toString(), registryPassword = UUID.randomUUID().toString();
        SaslSsl security = new SaslSsl(brokerPem, tls.resolve("truststore.p12"), LocalCosmos.TRUSTSTORE_PASSWORD, Map.of("tally", kafkaPassword));
        List<Process> pods = new ArrayList<>();
        try (KafkaBrokerProcess broker = KafkaBrokerProcess.start(dir.resolve("broker"), security)) {
            LocalSchemaRegistry registry = LocalSchemaRegistry.startSecure(dir.resolve("registry"), tls.resolve("cert.pem"),
                    tls.resolve("key.pem"), "tally-sr", registryPassword, cosmos.sslContext());
            Map<String, String> client = security.clientSettings("tally");
            try (Pipeline p = new Pipeline("pods", broker.bootstrapServers(), registry, cosmos, dir).withKafkaClientSettings(client)
                    .withSources(HelmUserConfigTest.USER_SOURCES, "transactions", "orders").provisionTopics()) {
                String apiKey = UUID.randomUUID().toString();
                int readPort = Ports.free();
                Map<String, Object> values = values(p, broker, registry, cosmos, tls, client, registryPassword, apiKey, readPort,
                        Files.readString(HelmUserConfigTest.USER_RULES));
                RenderedChart chart = RenderedChart.render("-f", HelmUserConfigTest.valuesFile(dir, values).toString());

                // The producers come first, as they would in production: their schemas are what rules check reads.
                List<String> loadgenFlags = new ArrayList<>(List.of("--loadgen.orders.topic=" + p.eventTopics().get(1),
                        "--loadgen.orders.share=0.5", "--loadgen.rules-file=" + HelmUserConfigTest.USER_RULES));
                client.forEach((k, v) -> loadgenFlags.add("--kafka." + k + "=" + v));
                loadgenFlags.add("--schema.registry.basic-auth.user-info=tally-sr:" + registryPassword);
                Pipeline.Truth truth = p.produceInBackground(p.loadgen(3_000, 0, 34, loadgenFlags.toArray(String[]::new)))
                        .get(3, TimeUnit.MINUTES);
                truth.assertExercisesEverything();

                Path ingestJar = moduleJar("ingest-app"), readJar = moduleJar("read-service");
                PodProcess check = PodProcess.of(chart, "tally-aggregation", "rules-check", dir.resolve("pods"));
                Run checked = runToEnd(check, ingestJar, dir.resolve("rules-check.log"));
                assertThat(checked.exitCode()).as("rules check of the user's files:\n%s", checked.output()).isZero();
                assertThat(checked.output()).contains("rules.yaml: 2 rules;").contains("fits: source transactions").contains("fits: source orders")
                        .containsPattern("(?m)^ok$");

                // helm install's pre-install hook: the user's rules become the deployment's generation 0
                Run applied = runToEnd(PodProcess.of(chart, "tally-rules-apply", "rules-apply", dir.resolve("pods")), ingestJar,
                        dir.resolve("rules-apply.log"));
                assertThat(applied.exitCode()).as("rules apply of the user's files:\n%s", applied.output()).isZero();
                assertThat(applied.output()).contains("applied: generation 0");

                pods.add(start(PodProcess.of(chart, "tally-aggregation", "ingest-app", dir.resolve("pods")), ingestJar, dir.resolve("aggregation.log")));
                pods.add(start(PodProcess.of(chart, "tally-sink", "ingest-app", dir.resolve("pods")), ingestJar, dir.resolve("sink.log")));
                pods.add(start(PodProcess.of(chart, "tally-read", "read-service", dir.resolve("pods")), readJar, dir.resolve("read.log")));
                try {
                    p.awaitConverged(truth, CONVERGE);
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + "\naggregation:\n" + Processes.tail(dir.resolve("aggregation.log"))
                            + "\nsink:\n" + Processes.tail(dir.resolve("sink.log")), e);
                }
                assertThat(pods).allSatisfy(pod -> assertThat(pod.isAlive()).isTrue());

                // read-service was given the user's rules: their grades answer, the shipped ones are unknown to it.
                String pk = p.stored().values().iterator().next().get("pk").asText();
                assertThat(rollup(readPort, pk, "declined-per-customer", "hour", apiKey)).as(Processes.tail(dir.resolve("read.log"))).isEqualTo(200);
                assertThat(rollup(readPort, pk, "spend-per-customer", "hour", apiKey)).isEqualTo(400);
                assertThat(rollup(readPort, pk, "declined-per-customer", "hour", "not-the-key")).isEqualTo(401);

                // The same init container with rules that do not fit the schemas stops the pod before the app.
                values.put("rules", Map.of("rulesYaml", Files.readString(OpsFiles.root().resolve("tests/src/test/resources/deploy/misfit-rules.yaml")),
                        "sourcesYaml", Files.readString(HelmUserConfigTest.USER_SOURCES)));
                RenderedChart misfit = RenderedChart.render("-f", HelmUserConfigTest.valuesFile(dir, values).toString());
                Run refused = runToEnd(PodProcess.of(misfit, "tally-aggregation", "rules-check", dir.resolve("misfit")), ingestJar,
                        dir.resolve("misfit-check.log"));
                assertThat(refused.exitCode()).as(refused.output()).isEqualTo(1);
                assertThat(refused.output()).contains("PROBLEM").contains("loyaltyTier");
            }
        } finally {
            for (Process pod : pods) {
                pod.destroy();
                if (!pod.waitFor(45, TimeUnit.SECONDS)) pod.destroyForcibly();
            }
        }
    }

    /** The user's values, with this machine's addresses and this run's names, topics and ports. */
    private static Map<String, Object> values(Pipeline p, KafkaBrokerProcess broker, LocalSchemaRegistry registry, LocalCosmos cosmos,
                                              Path tls, Map<String, String> client, String registryPassword, String apiKey, int readPort,
                                              String rules) throws IOException {
        Map<String, Object> values = new LinkedHashMap<>();
        Map<String, Object> plain = new LinkedHashMap<>(client);
        Map<String, Object> secret = new LinkedHashMap<>();
        for (String key : List.of("sasl.jaas.config", "ssl.truststore.password")) secret.put(key, plain.remove(key));
        plain.remove("ssl.truststore.location"); // the chart points it at the trust store of the Secret
        values.put("kafka", Map.of("bootstrapServers", broker.bootstrapServers(), "clientSettings", plain));
        values.put("schemaRegistry", Map.of("url", registry.url()));
        values.put("topics", Map.of("prefix", p.topics.prefix(), "createMissing", false));
        values.put("cosmos", Map.of("endpoint", cosmos.endpoint(), "database", p.database, "connectionMode", "gateway", "createIfMissing", true));
        values.put("rules", Map.of("rulesYaml", rules, "sourcesYaml", Files.readString(HelmUserConfigTest.USER_SOURCES)));
        // One instance of each, small heaps: three JVMs share two cores with the broker, registry and Cosmos endpoint.
        values.put("aggregation", Map.of("replicas", 1, "applicationId", p.appId, "metricsPort", Ports.free(), "standbyReplicas", 0,
                "javaOpts", "-Xmx768m -XX:+ExitOnOutOfMemoryError"));
        values.put("sink", Map.of("replicas", 1, "groupId", p.appId + "-sink", "metricsPort", Ports.free(),
                "javaOpts", "-Xmx512m -XX:+ExitOnOutOfMemoryError"));
        values.put("read", Map.of("replicas", 1, "port", readPort, "javaOpts", "-Xmx256m -XX:+ExitOnOutOfMemoryError"));
        values.put("secrets", Map.of("cosmosKey", LocalCosmos.EMULATOR_KEY, "readApiKeys", apiKey, "registryUserInfo", "tally-sr:" + registryPassword,
                "kafka", secret, "kafkaTruststore", Base64.getEncoder().encodeToString(Files.readAllBytes(tls.resolve("truststore.p12")))));
        return values;
    }

    /** The jar the image runs (docker/app.Dockerfile copies MODULE/target/MODULE.jar and its lib/). */
    private static Path moduleJar(String module) {
        Path jar = OpsFiles.root().resolve(module).resolve("target").resolve(module + ".jar");
        assertThat(jar).as("%s's jar: build it with the tests (./mvnw -pl tests -am verify packages it first)", module).isRegularFile();
        return jar;
    }

    /** The stand-ins' only JVM option: trust the local stack's CA, as LocalCosmos set it for this JVM. */
    private static List<String> trustLocalCa() {
        List<String> out = new ArrayList<>();
        for (String prop : List.of("javax.net.ssl.trustStore", "javax.net.ssl.trustStorePassword", "javax.net.ssl.trustStoreType")) {
            if (System.getProperty(prop) != null) out.add("-D" + prop + "=" + System.getProperty(prop));
        }
        return out;
    }

    private static Process start(PodProcess pod, Path jar, Path log) throws IOException {
        return pod.processBuilder(jar, trustLocalCa()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    record Run(int exitCode, String output) {}

    private static Run runToEnd(PodProcess pod, Path jar, Path log) throws IOException, InterruptedException {
        Process process = start(pod, jar, log);
        if (!process.waitFor(2, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new AssertionError(pod.container() + " did not end within 2 minutes:\n" + Files.readString(log));
        }
        return new Run(process.exitValue(), Files.readString(log));
    }

    private static int rollup(int port, String pk, String grade, String unit, String apiKey) throws IOException, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + port + "/v1/rollups/" + URLEncoder.encode(pk, StandardCharsets.UTF_8)
                + "?grade=" + grade + "&unit=" + unit + "&last=24");
        return HTTP.send(HttpRequest.newBuilder(uri).header("X-API-Key", apiKey).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode();
    }
}
