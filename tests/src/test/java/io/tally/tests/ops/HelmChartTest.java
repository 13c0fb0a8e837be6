package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.tally.config.Setting;
import io.tally.ingest.app.IngestSettings;
import io.tally.read.ReadSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/helm/tally renders with helm, the output is valid for the Kubernetes API (kubeconform against the API's
 * JSON schemas, offline) and for the ServiceMonitor and PrometheusRule CRDs, and it configures the apps only through settings they
 * declare, probes endpoints they serve, and sizes memory from the heap they are given.
 */
class HelmChartTest {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final String[] TEST_VALUES = {"--set", "secrets.cosmosKey=test-cosmos-key", "--set", "secrets.readApiKeys=key-a\\,key-b"};
    private static final long HEADROOM_BYTES = 512L << 20;
    private static final String WI_CLIENT_ID = "00000000-0000-0000-0000-00000000c1d0";

    private static Path rendered;
    private static List<JsonNode> objects;

    @BeforeAll
    static void render(@TempDir Path dir) throws IOException {
        rendered = dir.resolve("tally.yaml");
        Files.writeString(rendered, helm("template", "tally", OpsFiles.chart().toString(), "--namespace", "tally").stdout());
        objects = parse(rendered);
        assertThat(objects).as("rendered objects").isNotEmpty();
    }

    @Test
    void helmLintPasses() {
        helm("lint", "--strict", OpsFiles.chart().toString());
    }

    @Test
    void theManifestsAreValidKubernetesObjects(@TempDir Path dir) throws IOException {
        RenderedChart.of(Files.readString(rendered)).assertValid(dir);
    }

    /** The schemas are really in use: a field the API does not know fails the check. */
    @Test
    void kubeconformRejectsAnUnknownField(@TempDir Path dir) throws IOException {
        Path broken = dir.resolve("broken.yaml");
        Files.writeString(broken, Files.readString(rendered).replaceFirst("(?m)^(\\s+)terminationGracePeriodSeconds:", "$1terminationGraceSeconds:"));
        OpsTools.Run r = RenderedChart.kubeconform(dir, broken);
        assertThat(r.exitCode()).as("kubeconform on a manifest with an unknown field: %s", r.output()).isNotZero();
        assertThat(r.output()).contains("terminationGraceSeconds");
    }

    /** No default key: an install that forgets the Cosmos key stops at render time, not at the pods' start. */
    @Test
    void theChartRefusesToRenderWithoutACosmosKey() {
        OpsTools.Run r = helmAsIs("template", "tally", OpsFiles.chart().toString());
        assertThat(r.exitCode()).as("helm template without secrets: %s", r.output()).isNotZero();
        assertThat(r.output()).contains("secrets.cosmosKey");
    }

    @Test
    void anExistingSecretIsUsedInsteadOfOneFromValues() throws IOException {
        Path file = Files.createTempFile("tally-existing-secret", ".yaml");
        try {
            Files.writeString(file, helmAsIs("template", "tally", OpsFiles.chart().toString(), "--set", "secrets.existingSecret=vault-tally")
                    .expectSuccess().stdout());
            List<JsonNode> rendered = parse(file);
            assertThat(rendered).noneMatch(o -> o.path("kind").asText().equals("Secret"));
            assertThat(rendered.stream().flatMap(o -> o.findValues("secretKeyRef").stream()).map(ref -> ref.path("name").asText()))
                    .isNotEmpty().containsOnly("vault-tally");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Entra ID through AKS workload identity: no Cosmos key in the Secret or the environment, the ServiceAccount carries
     * the managed identity's client id, every pod the webhook's label and that ServiceAccount, and the apps load the
     * rendered settings (cosmos.auth=workload-identity, create-if-missing false). Valid Kubernetes objects, as above.
     */
    @Test
    void workloadIdentityRendersWithoutAKeyAndValidates(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("tally-wi.yaml");
        Files.writeString(file, helmAsIs("template", "tally", OpsFiles.chart().toString(), "--namespace", "tally",
                "--set", "cosmos.auth=workload-identity", "--set", "workloadIdentity.clientId=" + WI_CLIENT_ID,
                "--set", "cosmos.throughput=autoscale", "--set", "cosmos.throughputRuPerSecond=20000", "--set", "sink.ruBudget=6000",
                "--set", "secrets.readApiKeys=key-a").expectSuccess().stdout());
        List<JsonNode> wi = parse(file);

        JsonNode account = wi.stream().filter(o -> o.path("kind").asText().equals("ServiceAccount")).findFirst()
                .orElseThrow(() -> new AssertionError("no ServiceAccount rendered"));
        assertThat(account.path("metadata").path("annotations").path("azure.workload.identity/client-id").asText()).isEqualTo(WI_CLIENT_ID);
        JsonNode secret = wi.stream().filter(o -> o.path("kind").asText().equals("Secret")).findFirst().orElseThrow();
        assertThat(secret.path("stringData").has("cosmos-key")).as("a Cosmos key in the Secret").isFalse();
        assertThat(Files.readString(file)).doesNotContain("TALLY_COSMOS_KEY");

        List<JsonNode> workloads = wi.stream().filter(o -> Set.of("Deployment", "StatefulSet").contains(o.path("kind").asText())).toList();
        assertThat(workloads).hasSize(3);
        assertThat(workloads.stream().map(w -> w.path("metadata").path("name").asText()))
                .contains("tally-sink", "tally-read", "tally-aggregation");
        for (JsonNode w : workloads) {
            JsonNode pod = w.path("spec").path("template");
            assertThat(pod.path("spec").path("serviceAccountName").asText()).isEqualTo(account.path("metadata").path("name").asText());
            JsonNode container = pod.path("spec").path("containers").path(0);
            Map<String, String> env = env(container);
            // Every workload reads Cosmos (the aggregation only the rules record): each gets the identity.
            boolean usesCosmos = env.containsKey("TALLY_COSMOS_ENDPOINT");
            assertThat(usesCosmos).as("%s has the Cosmos settings", w.path("metadata").path("name")).isTrue();
            assertThat(pod.path("metadata").path("labels").path("azure.workload.identity/use").asText())
                    .as("%s pod label", w.path("metadata").path("name")).isEqualTo(usesCosmos ? "true" : "");
            if (!usesCosmos) continue;
            assertThat(env).containsEntry("TALLY_COSMOS_AUTH", "workload-identity").containsEntry("TALLY_COSMOS_CREATE_IF_MISSING", "false")
                    .containsEntry("TALLY_COSMOS_THROUGHPUT", "autoscale").containsEntry("TALLY_COSMOS_THROUGHPUT_RU_PER_SECOND", "20000");
            String[] args = strings(container.path("args")).toArray(String[]::new);
            boolean read = container.path("name").asText().equals("read-service");
            var cosmos = read ? ReadSettings.load(args, env).cosmos() : IngestSettings.load(args, env).cosmos();
            assertThat(cosmos.auth().mode()).isEqualTo(io.tally.cosmos.CosmosAuth.Mode.WORKLOAD_IDENTITY);
            assertThat(cosmos.auth().clientId()).isEqualTo(WI_CLIENT_ID);
            if (container.path("name").asText().equals("ingest-app") && "sink".equals(env.get("TALLY_INGEST_ROLE"))) {
                var sink = IngestSettings.load(args, env).sink();
                assertThat(sink.ruBudget()).as("the replicas' budget together").isEqualTo(6000);
                assertThat(sink.fleetBudgetControlContainer()).isEqualTo("tally-throughput-control");
            }
        }

        RenderedChart.of(Files.readString(file)).assertValid(dir.resolve("kubeconform"));
    }

    /** The chart refuses what the apps would refuse at start, and workload identity without an identity. */
    /**
     * A rules change by `helm upgrade` (docs/runbook.md, "Changing the rules"): the new files go to a hook ConfigMap, a
     * pre-upgrade hook Job applies them before the pods roll, and a Job named after their content runs the backfill
     * beside the live pods, with the live aggregation's application id; both load their settings, and it all validates.
     */
    @Test
    void aRulesChangeRendersTheApplyHookAndTheBackfillJobAndValidates(@TempDir Path dir) throws IOException {
        Path v1 = dir.resolve("v1.yaml"), v2 = dir.resolve("v2.yaml");
        Files.writeString(v1, helmAsIs("template", "tally", OpsFiles.chart().toString(), "--namespace", "tally", "--set", "secrets.cosmosKey=k",
                "--set", "secrets.readApiKeys=a", "--set-file", "rules.rulesYaml=" + OpsFiles.root().resolve("rules/default-rules.yaml"))
                .expectSuccess().stdout());
        Files.writeString(v2, helmAsIs("template", "tally", OpsFiles.chart().toString(), "--namespace", "tally", "--set", "secrets.cosmosKey=k",
                "--set", "secrets.readApiKeys=a", "--set-file", "rules.rulesYaml=" + OpsFiles.root().resolve("rules/velocity-rules.yaml"))
                .expectSuccess().stdout());
        List<JsonNode> objects = parse(v2);
        JsonNode next = objects.stream().filter(o -> o.path("metadata").path("name").asText().equals("tally-rules-next")).findFirst()
                .orElseThrow(() -> new AssertionError("no hook ConfigMap"));
        assertThat(next.path("metadata").path("annotations").path("helm.sh/hook").asText()).isEqualTo("pre-install,pre-upgrade,pre-rollback");
        assertThat(next.path("data").path("rules.yaml").asText()).isEqualTo(Files.readString(OpsFiles.root().resolve("rules/velocity-rules.yaml")));

        JsonNode apply = objects.stream().filter(o -> o.path("metadata").path("name").asText().equals("tally-rules-apply")).findFirst()
                .orElseThrow(() -> new AssertionError("no rules-apply Job"));
        assertThat(apply.path("metadata").path("annotations").path("helm.sh/hook-weight").asInt())
                .as("after the hook ConfigMap").isGreaterThan(next.path("metadata").path("annotations").path("helm.sh/hook-weight").asInt());
        JsonNode applyPod = apply.path("spec").path("template").path("spec");
        JsonNode applier = applyPod.path("containers").path(0);
        assertThat(strings(applier.path("args"))).containsExactly("rules", "apply", "/etc/tally/rules/rules.yaml");
        assertThat(applyPod.path("volumes").path(0).path("configMap").path("name").asText()).as("the new files, not the release's")
                .isEqualTo("tally-rules-next");
        assertThatCode(() -> IngestSettings.load(new String[0], env(applier))).doesNotThrowAnyException();

        List<String> backfills = new ArrayList<>();
        for (Path rendered : List.of(v1, v2)) {
            JsonNode job = parse(rendered).stream().filter(o -> o.path("metadata").path("name").asText().startsWith("tally-rules-backfill-"))
                    .findFirst().orElseThrow(() -> new AssertionError("no backfill Job"));
            assertThat(job.path("metadata").path("annotations").has("helm.sh/hook")).as("a release resource, not a hook").isFalse();
            backfills.add(job.path("metadata").path("name").asText());
            JsonNode c = job.path("spec").path("template").path("spec").path("containers").path(0);
            Map<String, String> e = env(c);
            assertThat(strings(c.path("args"))).startsWith("rules", "backfill");
            String liveApplication = env(one("StatefulSet", "tally-aggregation").path("spec").path("template").path("spec")
                    .path("containers").path(0)).get("TALLY_INGEST_APPLICATION_ID");
            assertThat(e).as("the live aggregation's stage 5 is what it feeds").containsEntry("TALLY_INGEST_APPLICATION_ID", liveApplication);
            assertThat(e).as("the sink's progress is what it waits for").containsEntry("TALLY_SINK_GROUP_ID",
                    env(one("Deployment", "tally-sink").path("spec").path("template").path("spec").path("containers").path(0)).get("TALLY_SINK_GROUP_ID"));
            assertThatCode(() -> io.tally.ingest.rules.BackfillSettings.load(strings(c.path("args")).subList(2, strings(c.path("args")).size()), e))
                    .doesNotThrowAnyException();
        }
        assertThat(backfills.get(0)).as("each content its own Job: a finished one is never re-run for new files").isNotEqualTo(backfills.get(1));
        RenderedChart.of(Files.readString(v2)).assertValid(dir.resolve("kubeconform"));
    }

    @Test
    void entraIdMisconfigurationsFailAtRenderTime() {
        OpsTools.Run create = helmAsIs("template", "tally", OpsFiles.chart().toString(), "--set", "cosmos.auth=workload-identity",
                "--set", "workloadIdentity.clientId=" + WI_CLIENT_ID, "--set", "cosmos.createIfMissing=true", "--set", "secrets.readApiKeys=k");
        assertThat(create.exitCode()).as(create.output()).isNotZero();
        assertThat(create.output()).contains("cosmos.createIfMissing=true cannot work with cosmos.auth=workload-identity");
        OpsTools.Run noClient = helmAsIs("template", "tally", OpsFiles.chart().toString(), "--set", "cosmos.auth=workload-identity",
                "--set", "secrets.readApiKeys=k");
        assertThat(noClient.exitCode()).as(noClient.output()).isNotZero();
        assertThat(noClient.output()).contains("workloadIdentity.clientId is required");
        OpsTools.Run unknown = helmAsIs("template", "tally", OpsFiles.chart().toString(), "--set", "cosmos.auth=password",
                "--set", "secrets.readApiKeys=k");
        assertThat(unknown.output()).contains("cosmos.auth=password: must be key, workload-identity");
    }

    /** The PrometheusRule is the rule file docker-compose's Prometheus loads and promtool tests, not a copy that drifts. */
    @Test
    void thePrometheusRuleCarriesTheTestedRules() throws IOException {
        JsonNode file = YAML.readTree(OpsFiles.rules().get(0).toFile());
        assertThat(one("PrometheusRule", "tally").path("spec").path("groups")).isEqualTo(file.path("groups"));
    }

    @Test
    void theAggregationIsAStatefulSetWithPersistentStateAndStandbys() {
        JsonNode sts = one("StatefulSet", "tally-aggregation");
        JsonNode container = sts.path("spec").path("template").path("spec").path("containers").path(0);
        Map<String, String> env = env(container);
        assertThat(env).containsEntry("TALLY_INGEST_ROLE", "aggregate");
        assertThat(Integer.parseInt(env.get("TALLY_INGEST_NUM_STANDBY_REPLICAS"))).as("standby replicas").isPositive();
        String claim = sts.path("spec").path("volumeClaimTemplates").path(0).path("metadata").path("name").asText();
        assertThat(claim).as("a volume claim per instance").isNotBlank();
        assertThat(container.path("volumeMounts").findValuesAsText("mountPath")).as("the state dir is on the claimed volume")
                .contains(env.get("TALLY_INGEST_STATE_DIR"));
        // The image's user (docker/app.Dockerfile) must be able to write the volume.
        String user = dockerfileUser();
        JsonNode security = sts.path("spec").path("template").path("spec").path("securityContext");
        assertThat(security.path("runAsUser").asText() + ":" + security.path("fsGroup").asText()).as("pod user:fsGroup").isEqualTo(user);
        assertThat(env(one("Deployment", "tally-sink").path("spec").path("template").path("spec").path("containers").path(0)))
                .containsEntry("TALLY_INGEST_ROLE", "sink");
    }

    @Test
    void everyTallyVariableIsADeclaredSettingAndTheSettingsLoad() {
        for (JsonNode container : containers()) {
            boolean read = container.path("name").asText().equals("read-service");
            List<Setting<?>> declared = read ? ReadSettings.all() : IngestSettings.all();
            Set<String> names = declared.stream().map(Setting::envName).collect(Collectors.toSet());
            Map<String, String> env = env(container);
            env.keySet().stream().filter(k -> k.startsWith("TALLY_")).forEach(k ->
                    assertThat(names).as("%s gets %s, which is not one of its settings", container.path("name"), k).contains(k));
            String[] args = strings(container.path("args")).toArray(String[]::new);
            assertThatCode(() -> {
                if (read) ReadSettings.load(args, env);
                else IngestSettings.load(args, env);
            }).as("%s settings load: env %s, args %s", container.path("name"), env.keySet(), List.of(args)).doesNotThrowAnyException();
        }
    }

    @Test
    void probesAskTheEndpointsTheAppsServe() {
        JsonNode read = one("Deployment", "tally-read").path("spec").path("template").path("spec").path("containers").path(0);
        int readPort = Integer.parseInt(env(read).get(ReadSettings.PORT.envName()));
        assertThat(namedPort(read, "http")).isEqualTo(readPort);
        assertThat(read.path("readinessProbe").path("httpGet").path("path").asText()).isEqualTo("/health/ready");
        assertThat(read.path("livenessProbe").path("httpGet").path("path").asText()).isEqualTo("/health/live");
        // ingest-app serves /metrics and /health/* on sink.metrics.port in either role.
        for (JsonNode workload : List.of(one("StatefulSet", "tally-aggregation"), one("Deployment", "tally-sink"))) {
            JsonNode ingest = workload.path("spec").path("template").path("spec").path("containers").path(0);
            int metricsPort = Integer.parseInt(env(ingest).get(io.tally.ingest.sink.SinkSettings.METRICS_PORT.envName()));
            assertThat(namedPort(ingest, "metrics")).isEqualTo(metricsPort);
            Map<String, String> paths = Map.of("startupProbe", "/health/live", "readinessProbe", "/health/ready", "livenessProbe", "/health/live");
            paths.forEach((probe, path) -> {
                assertThat(ingest.path(probe).path("httpGet").path("path").asText()).as("%s %s", workload.path("kind"), probe).isEqualTo(path);
                assertThat(ingest.path(probe).path("httpGet").path("port").asText()).as("%s %s", workload.path("kind"), probe).isEqualTo("metrics");
            });
        }
    }

    @Test
    void memoryRequestsCoverTheHeapWithHeadroom() {
        for (JsonNode container : containers()) {
            long heap = quantity(List.of(env(container).get("JAVA_OPTS").split("\\s+")).stream().filter(o -> o.startsWith("-Xmx"))
                    .findFirst().orElseThrow(() -> new AssertionError(container.path("name") + ": JAVA_OPTS sets no -Xmx")).substring(4));
            long request = quantity(container.path("resources").path("requests").path("memory").asText());
            long limit = quantity(container.path("resources").path("limits").path("memory").asText());
            assertThat(request).as("%s: memory request vs heap %d", container.path("name"), heap).isGreaterThanOrEqualTo(heap + HEADROOM_BYTES);
            assertThat(limit).as("%s: memory limit", container.path("name")).isGreaterThanOrEqualTo(request);
        }
    }

    @Test
    void secretsDisruptionBudgetsAndTheServiceMonitorPointAtWhatExists() {
        JsonNode secret = one("Secret", "tally-secrets");
        for (JsonNode container : containers()) {
            for (JsonNode ref : container.path("env").findValues("secretKeyRef")) {
                assertThat(ref.path("name").asText()).isEqualTo("tally-secrets");
                assertThat(secret.path("stringData").has(ref.path("key").asText())).as("secret key %s", ref.path("key")).isTrue();
            }
        }
        List<JsonNode> workloads = objects.stream().filter(o -> Set.of("Deployment", "StatefulSet").contains(o.path("kind").asText())).toList();
        List<JsonNode> budgets = kind("PodDisruptionBudget");
        assertThat(budgets).hasSize(workloads.size());
        for (JsonNode pdb : budgets) {
            JsonNode selector = pdb.path("spec").path("selector").path("matchLabels");
            assertThat(workloads).as("%s selects the pods of one workload", pdb.path("metadata").path("name"))
                    .filteredOn(w -> matches(selector, w.path("spec").path("template").path("metadata").path("labels"))).hasSize(1);
        }
        JsonNode monitor = one("ServiceMonitor", "tally");
        Set<String> monitoredPorts = Set.copyOf(monitor.path("spec").path("endpoints").findValuesAsText("port"));
        for (String service : List.of("tally-aggregation", "tally-sink", "tally-read")) {
            List<String> ports = one("Service", service).path("spec").path("ports").findValuesAsText("name");
            assertThat(ports).as("%s exposes a port the ServiceMonitor scrapes", service).containsAnyElementsOf(monitoredPorts);
        }
    }

    private static OpsTools.Run helm(String... args) {
        List<String> withValues = new ArrayList<>(List.of(args));
        withValues.addAll(List.of(TEST_VALUES));
        return helmAsIs(withValues.toArray(String[]::new)).expectSuccess();
    }

    private static OpsTools.Run helmAsIs(String... args) {
        return RenderedChart.helm(args);
    }

    private static List<JsonNode> parse(Path file) throws IOException {
        return RenderedChart.of(Files.readString(file)).objects();
    }

    private static Map<String, String> env(JsonNode container) {
        return RenderedChart.env(container);
    }

    private static List<String> strings(JsonNode node) {
        return RenderedChart.strings(node);
    }

    private static List<JsonNode> kind(String kind) {
        return objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
    }

    private static JsonNode one(String kind, String name) {
        return kind(kind).stream().filter(o -> o.path("metadata").path("name").asText().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " in the rendered chart"));
    }

    private static List<JsonNode> containers() {
        List<JsonNode> out = new ArrayList<>();
        objects.stream().filter(o -> Set.of("Deployment", "StatefulSet").contains(o.path("kind").asText()))
                .forEach(o -> o.path("spec").path("template").path("spec").path("containers").forEach(out::add));
        assertThat(out).hasSize(3);
        return out;
    }

    /** "uid:gid" of the USER line of docker/app.Dockerfile (the same in every stage). */
    private static String dockerfileUser() {
        try {
            List<String> users = Files.readAllLines(OpsFiles.root().resolve("docker/app.Dockerfile")).stream()
                    .filter(l -> l.startsWith("USER ")).map(l -> l.substring(5).trim()).distinct().toList();
            assertThat(users).as("USER lines of docker/app.Dockerfile").hasSize(1);
            return users.get(0);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static int namedPort(JsonNode container, String name) {
        for (JsonNode p : container.path("ports")) if (p.path("name").asText().equals(name)) return p.path("containerPort").asInt();
        throw new AssertionError(container.path("name") + " has no port named " + name);
    }

    private static boolean matches(JsonNode selector, JsonNode labels) {
        var it = selector.fields();
        while (it.hasNext()) {
            var e = it.next();
            if (!e.getValue().asText().equals(labels.path(e.getKey()).asText(null))) return false;
        }
        return true;
    }

    /** Kubernetes and JVM memory sizes: 1536Mi, 2Gi, 1g, 512m. */
    static long quantity(String q) {
        var m = java.util.regex.Pattern.compile("(\\d+)(Ki|Mi|Gi|k|m|g)?").matcher(q.trim());
        if (!m.matches()) throw new AssertionError("not a memory size: " + q);
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "" : m.group(2);
        return switch (unit) {
            case "Ki", "k" -> n << 10;
            case "Mi", "m" -> n << 20;
            case "Gi", "g" -> n << 30;
            default -> n;
        };
    }


}
