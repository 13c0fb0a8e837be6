package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * deploy/helm/tally rendered by {@code helm template} (the pinned helm of deploy/tools): the manifest text and its
 * objects, with the lookups the chart tests share, and kubeconform's verdict on it.
 */
record RenderedChart(String text, List<JsonNode> objects) {
    /** The Kubernetes release validated against; its schemas come from deploy/tools/k8s-schemas.sh. */
    static final String KUBERNETES_VERSION = "1.34.0";
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final Set<String> WORKLOAD_KINDS = Set.of("Deployment", "StatefulSet", "Job");

    /** {@code helm template tally deploy/helm/tally --namespace tally ARGS}; fails unless helm succeeds. */
    static RenderedChart render(String... args) {
        List<String> all = new ArrayList<>(List.of("template", "tally", OpsFiles.chart().toString(), "--namespace", "tally"));
        all.addAll(List.of(args));
        return of(helm(all.toArray(String[]::new)).expectSuccess().stdout());
    }

    static RenderedChart of(String text) {
        List<JsonNode> out = new ArrayList<>();
        try (var parser = YAML.getFactory().createParser(text)) {
            for (var it = YAML.readValues(parser, JsonNode.class); it.hasNext(); ) {
                JsonNode node = it.next();
                if (node != null && node.isObject() && !node.isEmpty()) out.add(node);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("helm's output does not parse as YAML", e);
        }
        assertThat(out).as("rendered objects").isNotEmpty();
        return new RenderedChart(text, List.copyOf(out));
    }

    static OpsTools.Run helm(String... args) {
        List<String> command = new ArrayList<>(List.of(OpsTools.helm().toString()));
        command.addAll(List.of(args));
        return OpsTools.run(OpsFiles.root(), command.toArray(String[]::new));
    }

    List<JsonNode> kind(String kind) {
        return objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
    }

    JsonNode one(String kind, String name) {
        return kind(kind).stream().filter(o -> o.path("metadata").path("name").asText().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " in the rendered chart"));
    }

    List<JsonNode> workloads() {
        return objects.stream().filter(o -> WORKLOAD_KINDS.contains(o.path("kind").asText())).toList();
    }

    /** The pod template's spec of a workload. */
    static JsonNode podSpec(JsonNode workload) {
        return workload.path("spec").path("template").path("spec");
    }

    /** kubeconform, strict, offline, against the Kubernetes schemas and the Prometheus Operator CRDs; every object valid. */
    void assertValid(Path scratch) throws IOException {
        Files.createDirectories(scratch);
        Path manifest = scratch.resolve("rendered.yaml");
        Files.writeString(manifest, text);
        writeCrdSchema(scratch, "servicemonitor", "monitoring.coreos.com_servicemonitors.yaml");
        writeCrdSchema(scratch, "prometheusrule", "monitoring.coreos.com_prometheusrules.yaml");
        OpsTools.Run r = kubeconform(scratch, manifest).expectSuccess();
        JsonNode summary = new ObjectMapper().readTree(r.stdout()).path("summary");
        assertThat(summary.path("valid").asInt()).as("kubeconform: %s", r.output()).isEqualTo(objects.size());
        assertThat(summary.path("skipped").asInt()).as("kubeconform skipped a kind it has no schema for: %s", r.output()).isZero();
    }

    static OpsTools.Run kubeconform(Path crdSchemas, Path manifests) {
        Path schemas = OpsTools.kubernetesSchemas();
        return OpsTools.run(OpsFiles.root(), OpsTools.kubeconform().toString(), "-strict", "-summary", "-output", "json",
                "-kubernetes-version", KUBERNETES_VERSION,
                "-schema-location", schemas + "/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json",
                "-schema-location", crdSchemas + "/{{ .ResourceKind }}{{ .KindSuffix }}.json",
                manifests.toString());
    }

    /** A CRD's v1 openAPIV3Schema, where kubeconform looks for it ({kind}-{group prefix}-{version}.json). */
    static void writeCrdSchema(Path dir, String kind, String crdFile) throws IOException {
        JsonNode crd = YAML.readTree(OpsTools.monitoringCrds().resolve(crdFile).toFile());
        for (JsonNode version : crd.path("spec").path("versions")) {
            if (version.path("name").asText().equals("v1")) {
                new ObjectMapper().writeValue(dir.resolve(kind + "-monitoring-v1.json").toFile(), version.path("schema").path("openAPIV3Schema"));
                return;
            }
        }
        throw new AssertionError("no v1 in " + crdFile);
    }

    /** The container's environment; a value from a Secret stands in as "secret-from-KEY". */
    static Map<String, String> env(JsonNode container) {
        Map<String, String> env = new LinkedHashMap<>();
        for (JsonNode e : container.path("env")) {
            JsonNode ref = e.path("valueFrom").path("secretKeyRef");
            env.put(e.path("name").asText(), ref.isMissingNode() ? e.path("value").asText() : "secret-from-" + ref.path("key").asText());
        }
        return env;
    }

    static List<String> strings(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.forEach(n -> out.add(n.asText()));
        return out;
    }
}
