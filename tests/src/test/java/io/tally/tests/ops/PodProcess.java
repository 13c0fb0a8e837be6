package io.tally.tests.ops;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;

/**
 * One container of a rendered workload as a process on this machine, without a Kubernetes API server or a container
 * runtime: its args and environment exactly as rendered, {@code secretKeyRef} variables resolved from the rendered
 * Secret, and each volume's files (ConfigMap keys, Secret items, an empty directory for a claim) written under a
 * scratch directory that stands in for the mount path. The only change to args and env is that path prefix.
 *
 * @param javaOptions {@code JAVA_OPTS} split into words, as the image's entry point expands it
 * @param mounts      mount path in the pod -> the directory standing in for it
 */
record PodProcess(String container, List<String> javaOptions, List<String> args, Map<String, String> env, Map<String, Path> mounts) {

    /** {@code containerName} among the workload's containers and init containers. */
    static PodProcess of(RenderedChart chart, String workloadName, String containerName, Path scratch) throws IOException {
        JsonNode workload = chart.workloads().stream().filter(w -> w.path("metadata").path("name").asText().equals(workloadName))
                .findFirst().orElseThrow(() -> new AssertionError("no workload " + workloadName));
        JsonNode pod = RenderedChart.podSpec(workload);
        JsonNode container = StreamSupport.stream(pod.path("initContainers").spliterator(), false)
                .filter(c -> c.path("name").asText().equals(containerName)).findFirst()
                .or(() -> StreamSupport.stream(pod.path("containers").spliterator(), false)
                        .filter(c -> c.path("name").asText().equals(containerName)).findFirst())
                .orElseThrow(() -> new AssertionError(workloadName + " has no container " + containerName));

        Map<String, JsonNode> volumes = new LinkedHashMap<>();
        pod.path("volumes").forEach(v -> volumes.put(v.path("name").asText(), v));
        Map<String, Path> mounts = new LinkedHashMap<>();
        for (JsonNode m : container.path("volumeMounts")) {
            String name = m.path("name").asText();
            Path dir = scratch.resolve(workloadName).resolve(name);
            Files.createDirectories(dir);
            JsonNode volume = volumes.get(name);
            if (volume == null) {
                boolean claimed = StreamSupport.stream(workload.path("spec").path("volumeClaimTemplates").spliterator(), false)
                        .anyMatch(t -> t.path("metadata").path("name").asText().equals(name));
                if (!claimed) throw new AssertionError(workloadName + "/" + containerName + " mounts " + name + ", which no volume or claim defines");
            } else if (volume.has("configMap")) {
                JsonNode data = chart.one("ConfigMap", volume.path("configMap").path("name").asText()).path("data");
                data.fields().forEachRemaining(e -> write(dir.resolve(e.getKey()), e.getValue().asText().getBytes(StandardCharsets.UTF_8)));
            } else if (volume.has("secret")) {
                JsonNode secret = chart.one("Secret", volume.path("secret").path("secretName").asText());
                for (JsonNode item : volume.path("secret").path("items")) {
                    write(dir.resolve(item.path("path").asText()), secretValue(secret, item.path("key").asText()));
                }
            } else {
                throw new AssertionError("volume " + name + " of " + workloadName + ": a kind this stand-in does not write: " + volume);
            }
            mounts.put(m.path("mountPath").asText(), dir);
        }

        Map<String, String> env = new LinkedHashMap<>();
        for (JsonNode e : container.path("env")) {
            JsonNode ref = e.path("valueFrom").path("secretKeyRef");
            String value = ref.isMissingNode() ? e.path("value").asText()
                    : new String(secretValue(chart.one("Secret", ref.path("name").asText()), ref.path("key").asText()), StandardCharsets.UTF_8);
            env.put(e.path("name").asText(), remap(value, mounts));
        }
        List<String> args = RenderedChart.strings(container.path("args")).stream().map(a -> remap(a, mounts)).toList();
        List<String> javaOptions = List.of(env.getOrDefault("JAVA_OPTS", "").trim().split("\\s+")).stream().filter(o -> !o.isEmpty()).toList();
        return new PodProcess(containerName, javaOptions, args, env, mounts);
    }

    /**
     * The image's entry point ({@code exec java $JAVA_OPTS -jar "$APP_JAR" "$@"}) for {@code jar}, with only the rendered
     * environment, and {@code extraJavaOptions} after JAVA_OPTS.
     */
    ProcessBuilder processBuilder(Path jar, List<String> extraJavaOptions) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(javaOptions);
        command.addAll(extraJavaOptions);
        command.addAll(List.of("-jar", jar.toString()));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().clear();
        pb.environment().putAll(env);
        return pb;
    }

    /** A key of a rendered Secret: stringData as written, data decoded from base64. */
    static byte[] secretValue(JsonNode secret, String key) {
        if (secret.path("stringData").has(key)) return secret.path("stringData").path(key).asText().getBytes(StandardCharsets.UTF_8);
        if (secret.path("data").has(key)) return Base64.getDecoder().decode(secret.path("data").path(key).asText());
        throw new AssertionError("Secret " + secret.path("metadata").path("name").asText() + " has no key " + key);
    }

    private static String remap(String value, Map<String, Path> mounts) {
        String out = value;
        for (String mountPath : mounts.keySet().stream().sorted(Comparator.comparingInt(String::length).reversed()).toList()) {
            out = out.replace(mountPath, mounts.get(mountPath).toString());
        }
        return out;
    }

    private static void write(Path file, byte[] content) {
        try {
            Files.createDirectories(file.getParent());
            Files.write(file, content);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
