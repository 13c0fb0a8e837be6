package io.tally.tests.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.tally.ingest.sink.SinkSettings;
import io.tally.read.ReadSettings;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docker-compose.yml's Prometheus and Grafana, checked without a Docker engine: they mount the files of
 * deploy/monitoring where their configs look for them, Prometheus scrapes the ports the apps serve metrics on,
 * Grafana's data source is that Prometheus under the uid every dashboard panel names, and docker-compose itself
 * accepts the file.
 */
class MonitoringComposeTest {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static JsonNode services;

    @BeforeAll
    static void readComposeFile() throws IOException {
        services = YAML.readTree(OpsFiles.root().resolve("docker-compose.yml").toFile()).path("services");
    }

    @Test
    void prometheusLoadsTheRulesAndScrapesEachAppOnItsMetricsPort() throws IOException {
        Map<String, String> mounts = mounts("prometheus");
        Path config = OpsFiles.monitoring().resolve("prometheus/prometheus.yml");
        assertThat(mounts).as("prometheus mounts").containsEntry("/etc/prometheus/prometheus.yml", "deploy/monitoring/prometheus/prometheus.yml");
        assertThat(strings(services.path("prometheus").path("command"))).contains("--config.file=/etc/prometheus/prometheus.yml");
        JsonNode prometheus = YAML.readTree(config.toFile());
        for (JsonNode glob : prometheus.path("rule_files")) {
            String dir = glob.asText().substring(0, glob.asText().lastIndexOf('/'));
            assertThat(mounts).as("rule_files %s: its directory is mounted from deploy/monitoring/prometheus/rules", glob.asText())
                    .containsEntry(dir, "deploy/monitoring/prometheus/rules");
        }
        Map<String, Integer> metricsPorts = Map.of(
                "ingest-app", Integer.parseInt(environment("ingest-app").getOrDefault(SinkSettings.METRICS_PORT.envName(),
                        SinkSettings.METRICS_PORT.defaultValue().orElseThrow())),
                "read-service", Integer.parseInt(environment("read-service").getOrDefault(ReadSettings.PORT.envName(),
                        ReadSettings.PORT.defaultValue().orElseThrow())));
        Set<String> scraped = new HashSet<>();
        for (JsonNode job : prometheus.path("scrape_configs")) {
            for (JsonNode target : job.path("static_configs").path(0).path("targets")) {
                URI uri = URI.create("http://" + target.asText());
                assertThat(metricsPorts).as("scrape target %s is an app service", target.asText()).containsKey(uri.getHost());
                assertThat(uri.getPort()).as("scrape target %s: the app's metrics port", target.asText()).isEqualTo(metricsPorts.get(uri.getHost()));
                assertThat(job.path("metrics_path").asText("/metrics")).isEqualTo("/metrics");
                scraped.add(uri.getHost());
            }
        }
        assertThat(scraped).as("apps scraped").isEqualTo(metricsPorts.keySet());
    }

    @Test
    void grafanaProvisionsThePrometheusDataSourceAndTheDashboards() throws IOException {
        Map<String, String> mounts = mounts("grafana");
        assertThat(mounts).containsEntry("/etc/grafana/provisioning", "deploy/monitoring/grafana/provisioning");
        Path provisioning = OpsFiles.monitoring().resolve("grafana/provisioning");
        JsonNode datasource = YAML.readTree(provisioning.resolve("datasources/prometheus.yml").toFile()).path("datasources").path(0);
        URI url = URI.create(datasource.path("url").asText());
        assertThat(url.getHost()).as("Grafana's data source is the prometheus service").isEqualTo("prometheus");
        assertThat(strings(services.path("prometheus").path("expose"))).contains(Integer.toString(url.getPort()));
        String uid = datasource.path("uid").asText();

        JsonNode provider = YAML.readTree(provisioning.resolve("dashboards/tally.yml").toFile()).path("providers").path(0);
        assertThat(mounts).as("the dashboards directory is mounted where the provider reads it")
                .containsEntry(provider.path("options").path("path").asText(), "deploy/monitoring/grafana/dashboards");
        assertThat(environment("grafana").get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"))
                .startsWith(provider.path("options").path("path").asText() + "/");

        for (Path file : OpsFiles.dashboards()) {
            JsonNode dashboard = new ObjectMapper().readTree(file.toFile());
            assertThat(dashboard.path("uid").asText()).as("%s: uid", file).isNotBlank();
            Set<Integer> ids = new HashSet<>();
            for (JsonNode panel : dashboard.path("panels")) {
                assertThat(ids.add(panel.path("id").asInt())).as("%s: panel id %s is unique", file, panel.path("id")).isTrue();
                if (panel.path("type").asText().equals("row")) continue;
                assertThat(panel.path("datasource").path("uid").asText()).as("%s: panel %s data source", file, panel.path("title")).isEqualTo(uid);
                assertThat(panel.path("targets")).as("%s: panel %s queries", file, panel.path("title")).isNotEmpty();
                for (JsonNode target : panel.path("targets")) {
                    assertThat(target.path("expr").asText()).as("%s: panel %s", file, panel.path("title")).isNotBlank();
                }
                JsonNode grid = panel.path("gridPos");
                assertThat(grid.path("x").asInt() + grid.path("w").asInt()).as("%s: panel %s fits 24 columns", file, panel.path("title"))
                        .isLessThanOrEqualTo(24);
            }
        }
    }

    /**
     * docker-compose 1.29 (Debian's) validates the whole file against the compose schema. It predates the top-level
     * {@code name} key of the Compose Specification, so the check runs on a copy without it, with the same project
     * name given as {@code -p}.
     */
    @Test
    void dockerComposeAcceptsTheFile() throws IOException {
        boolean installed = OpsTools.run(OpsFiles.root(), "bash", "-c", "command -v docker-compose").exitCode() == 0;
        Assumptions.assumeTrue(installed, "docker-compose is not installed (Debian: apt-get install docker-compose); "
                + "the static checks above still ran");
        Path root = OpsFiles.root();
        List<String> lines = new ArrayList<>(Files.readAllLines(root.resolve("docker-compose.yml")));
        String name = lines.stream().filter(l -> l.startsWith("name:")).findFirst().map(l -> l.substring(5).trim()).orElse("tally");
        lines.removeIf(l -> l.startsWith("name:"));
        Path copy = Files.createTempFile("docker-compose", ".yml");
        try {
            Files.write(copy, lines);
            OpsTools.run(root, "docker-compose", "--project-directory", root.toString(), "-p", name, "-f", copy.toString(),
                    "config", "-q").expectSuccess();
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    /** container path -> host path (relative to the repository, without "./"), of the bind mounts of a service. */
    private static Map<String, String> mounts(String service) {
        assertThat(services.has(service)).as("docker-compose.yml has a %s service", service).isTrue();
        Map<String, String> mounts = new LinkedHashMap<>();
        for (JsonNode volume : services.path(service).path("volumes")) {
            String[] parts = volume.asText().split(":");
            mounts.put(parts[1], parts[0].replaceFirst("^\\./", ""));
        }
        return mounts;
    }

    private static Map<String, String> environment(String service) {
        Map<String, String> env = new LinkedHashMap<>();
        services.path(service).path("environment").fields().forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
        return env;
    }

    private static List<String> strings(JsonNode node) {
        List<String> out = new ArrayList<>();
        node.forEach(n -> out.add(n.asText()));
        return out;
    }
}
