package io.tally.tests.compose;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.tally.config.Config;
import io.tally.config.Setting;
import io.tally.cosmos.CosmosSettings;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.app.KafkaClientSettings;
import io.tally.ingest.source.RulesCheckCommand;
import io.tally.ingest.sink.SinkSettings;
import io.tally.ingest.topics.TopicsCommand;
import io.tally.loadgen.LoadgenSettings;
import io.tally.read.ReadSettings;
import io.tally.schemas.Topics;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docker-compose.yml cannot be run on machines without a Docker engine, so this test checks what can
 * be checked without one: that the file agrees with the code and with itself. Services that are
 * referenced exist, every TALLY_* variable an app gets is one of its declared settings (and parses),
 * every address an app is given names a compose service and a port that service listens on, the
 * images are built from files that exist, every long-running service has a healthcheck, the topics
 * come from ingest-app's own topics command before anything uses them, and the demo service drives
 * ingest-app and read-service through addresses they serve, with options local/demo.sh accepts.
 */
class ComposeConsistencyTest {
    private static final String KAFKA_BOOTSTRAP = "kafka.bootstrap.servers";
    private static final String REGISTRY_URL = "schema.registry.url";
    private static final String COSMOS_ENDPOINT = "cosmos.endpoint";
    private static final String EMULATOR_IMAGE = "mcr.microsoft.com/cosmosdb/linux/azure-cosmos-emulator";

    /** The app services and the settings each one declares. The demo service runs loadgen. */
    private static final Map<String, List<Setting<?>>> APPS = new LinkedHashMap<>();
    /** Services whose image is built from another module than the one named like the service. */
    private static final Map<String, String> MODULE_OF = Map.of("demo", "loadgen", "topics", "ingest-app", "rules-check", "ingest-app");
    /** Where the services that read rules mount the user's rules directory. */
    private static final String RULES_MOUNT = "/etc/tally/rules";
    /** The services that read the rules and sources files, and the settings that name them. */
    private static final Map<String, List<String>> RULES_READERS = Map.of(
            "ingest-app", List.of("TALLY_INGEST_RULES_FILE", "TALLY_INGEST_SOURCES_FILE"),
            "rules-check", List.of("TALLY_INGEST_RULES_FILE", "TALLY_INGEST_SOURCES_FILE"),
            "read-service", List.of("TALLY_READ_RULES_FILE"));
    /** Cosmos settings the apps take from the shell or .env, so the compose path reaches an account with Entra ID. */
    private static final List<Setting<?>> COSMOS_FROM_HOST = List.of(CosmosSettings.ENDPOINT, io.tally.cosmos.CosmosAuth.MODE,
            io.tally.cosmos.CosmosAuth.TENANT_ID, io.tally.cosmos.CosmosAuth.CLIENT_ID, io.tally.cosmos.CosmosAuth.CLIENT_SECRET,
            io.tally.cosmos.CosmosAuth.AUTHORITY_HOST, CosmosSettings.CREATE);
    private static final java.util.regex.Pattern INTERPOLATION = java.util.regex.Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?}");

    static {
        APPS.put("ingest-app", IngestSettings.all());
        APPS.put("topics", TopicsCommand.SETTINGS);
        APPS.put("rules-check", RulesCheckCommand.SETTINGS);
        APPS.put("read-service", ReadSettings.all());
        APPS.put("loadgen", LoadgenSettings.ALL);
        APPS.put("demo", LoadgenSettings.ALL);
    }

    private static Path root;
    private static JsonNode services;

    @BeforeAll
    static void readComposeFile() throws IOException {
        root = repositoryRoot();
        JsonNode compose = new ObjectMapper(new YAMLFactory()).readTree(root.resolve("docker-compose.yml").toFile());
        services = compose.path("services");
        assertThat(services.isObject()).as("docker-compose.yml has a services mapping").isTrue();
    }

    // ------------------------------------------------------------------------------------------------

    @Test
    void theDemoServicesAreAllThere() {
        assertThat(serviceNames()).as("app services").containsAll(APPS.keySet());
        assertThat(servicesWithImage("apache/kafka:")).as("a Kafka broker (apache/kafka)").isNotEmpty();
        assertThat(servicesWithImage("confluentinc/cp-schema-registry:")).as("a Confluent Schema Registry").hasSize(1);
        assertThat(servicesWithImage(EMULATOR_IMAGE + ":")).as("a Cosmos DB emulator").hasSize(1);
        assertThat(strings(services.path("topics").path("command"))).as("a service that creates the topics").containsExactly("topics");
    }

    @Test
    void dependsOnNamesExistingServicesWithConditionsTheyCanMeet() {
        for (String service : serviceNames()) {
            dependsOn(service).forEach((dependency, condition) -> {
                assertThat(serviceNames()).as("%s depends on %s: no such service", service, dependency).contains(dependency);
                assertThat(dependency).as("%s depends on itself", service).isNotEqualTo(service);
                assertThat(condition).as("%s -> %s: condition", service, dependency)
                        .isIn("service_started", "service_healthy", "service_completed_successfully");
                if (condition.equals("service_healthy")) {
                    assertThat(hasHealthcheck(dependency))
                            .as("%s waits for %s to be healthy, but %s has no healthcheck", service, dependency, dependency).isTrue();
                }
                if (condition.equals("service_completed_successfully")) {
                    assertThat(isOneShot(dependency))
                            .as("%s waits for %s to complete, but %s is not a one-shot (restart: \"no\")", service, dependency, dependency)
                            .isTrue();
                }
            });
        }
        for (String service : serviceNames()) {
            assertThat(dependsTransitivelyOn(service, service)).as("dependency cycle through %s", service).isFalse();
        }
    }

    @Test
    void everyTallyVariableIsADeclaredSettingOfItsAppAndParses() {
        APPS.forEach((app, declared) -> {
            Map<String, String> env = environment(app);
            Set<String> names = declared.stream().map(Setting::envName).collect(Collectors.toSet());
            env.keySet().stream().filter(k -> k.startsWith("TALLY_")).forEach(k ->
                    assertThat(names).as("%s gets %s, which is not one of its settings %s", app, k, names).contains(k));
            assertThat(env.keySet().stream().filter(k -> k.startsWith("TALLY_")))
                    .as("%s is configured through TALLY_* settings", app).isNotEmpty();
            env.forEach((k, v) -> assertThat(v).as("%s: %s has no value (it would come from the host)", app, k).isNotNull());
        });
        // The values must also parse and validate, exactly as the apps will load them at start.
        assertThatCode(() -> IngestSettings.load(new String[0], environment("ingest-app"))).as("ingest-app settings").doesNotThrowAnyException();
        assertThatCode(() -> Config.load(TopicsCommand.SETTINGS, List.of(KafkaClientSettings.PREFIX), new String[0], environment("topics")))
                .as("topics command settings").doesNotThrowAnyException();
        assertThatCode(() -> ReadSettings.load(new String[0], environment("read-service"))).as("read-service settings").doesNotThrowAnyException();
        assertThatCode(() -> Config.load(RulesCheckCommand.SETTINGS, List.of(), new String[0], environment("rules-check")))
                .as("rules check settings").doesNotThrowAnyException();
        assertThatCode(() -> LoadgenSettings.load(new String[0], environment("loadgen"))).as("loadgen settings").doesNotThrowAnyException();
        assertThatCode(() -> LoadgenSettings.load(new String[0], environment("demo"))).as("demo (loadgen) settings").doesNotThrowAnyException();

        for (String service : serviceNames()) {
            if (APPS.containsKey(service)) continue;
            assertThat(environment(service).keySet().stream().filter(k -> k.startsWith("TALLY_")))
                    .as("%s is not a Tally app; TALLY_* variables there are read by nothing", service).isEmpty();
        }
    }

    @Test
    void appsReachKafkaTheRegistryAndCosmosThroughComposeServices() {
        APPS.forEach((app, declared) -> {
            Map<String, String> env = environment(app);
            for (String key : List.of(KAFKA_BOOTSTRAP, REGISTRY_URL, COSMOS_ENDPOINT)) {
                Optional<Setting<?>> setting = find(declared, key);
                if (setting.isEmpty()) continue;
                String value = env.get(setting.get().envName());
                assertThat(value).as("%s must set %s: the default (%s) is the container itself", app,
                        setting.get().envName(), setting.get().defaultValue().orElse("none")).isNotBlank();
                switch (key) {
                    case KAFKA_BOOTSTRAP -> assertKafkaAddresses(app, value);
                    case REGISTRY_URL -> {
                        for (String url : value.split(",")) {
                            URI uri = URI.create(url.trim());
                            assertThat(uri.getScheme()).as("%s: %s", app, url).isEqualTo("http");
                            assertServicePort(app, uri.getHost(), uri.getPort());
                            assertThat(servicesWithImage("confluentinc/cp-schema-registry:"))
                                    .as("%s: %s is not the schema registry", app, url).contains(uri.getHost());
                        }
                    }
                    default -> {
                        URI uri = URI.create(value);
                        assertServicePort(app, uri.getHost(), uri.getPort());
                        assertThat(image(uri.getHost())).as("%s: %s is not the Cosmos emulator", app, value).startsWith(EMULATOR_IMAGE + ":");
                    }
                }
            }
        });
        // The infrastructure's own Kafka clients, too.
        for (String service : serviceNames()) {
            Map<String, String> env = environment(service);
            if (env.containsKey("SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS")) {
                assertKafkaAddresses(service, env.get("SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS"));
            }
            List<String> entrypoint = strings(services.path(service).path("entrypoint"));
            int flag = entrypoint.indexOf("--bootstrap-server");
            if (flag >= 0) assertKafkaAddresses(service, entrypoint.get(flag + 1));
        }
    }

    @Test
    void appsTalkToTheEmulatorInGatewayModeOverHttpsAndTrustItOnlyByItsServiceName() {
        String emulator = servicesWithImage(EMULATOR_IMAGE + ":").get(0);
        Map<String, String> emulatorEnv = environment(emulator);
        for (String app : appsWith(COSMOS_ENDPOINT)) {
            Map<String, String> env = environment(app);
            URI endpoint = URI.create(env.get(CosmosEnv.ENDPOINT));
            assertThat(endpoint.getHost()).isEqualTo(emulator);
            // The Java SDK speaks HTTPS only; the emulator defaults to plain HTTP.
            assertThat(endpoint.getScheme()).as("%s: Cosmos endpoint scheme", app).isEqualTo("https");
            assertThat(emulatorEnv.get("PROTOCOL")).as("%s: PROTOCOL", emulator).isEqualTo(endpoint.getScheme());
            // The vNext emulator implements gateway mode only.
            assertThat(env.get(CosmosEnv.MODE)).as("%s: %s", app, CosmosEnv.MODE).isEqualToIgnoringCase("gateway");
            // The SDK skips certificate validation only for its emulator host (localhost unless told otherwise).
            List<String> javaOpts = List.of(env.getOrDefault("JAVA_OPTS", "").trim().split("\\s+"));
            assertThat(javaOpts).as("%s: JAVA_OPTS", app).contains(
                    "-DCOSMOS.EMULATOR_HOST=" + endpoint.getHost(),
                    "-DCOSMOS.EMULATOR_SERVER_CERTIFICATE_VALIDATION_DISABLED=true");
            // The emulator advertises this host in its account metadata; the SDK follows it.
            assertThat(emulatorEnv.get("GATEWAY_PUBLIC_ENDPOINT")).as("%s: GATEWAY_PUBLIC_ENDPOINT", emulator).isEqualTo(endpoint.getHost());
        }
    }

    /**
     * Endpoint discovery is automatic only for 127.0.0.1/localhost endpoints; against the emulator's
     * service name it would follow whatever host the emulator advertises, so compose turns it off.
     */
    @Test
    void endpointDiscoveryIsOffForTheEmulator() {
        for (String app : appsWith(COSMOS_ENDPOINT)) {
            assertThat(environment(app).get(CosmosSettings.DISCOVERY.envName())).as("%s: %s", app, CosmosSettings.DISCOVERY.envName())
                    .isEqualToIgnoringCase("false");
        }
    }

    @Test
    void readServiceBindsAllInterfacesAndPublishesItsPort() {
        Map<String, String> env = environment("read-service");
        assertThat(env.get(ReadSettings.HOST.envName())).as("read-service must bind 0.0.0.0 inside its container").isEqualTo("0.0.0.0");
        int port = Integer.parseInt(env.getOrDefault(ReadSettings.PORT.envName(), ReadSettings.PORT.defaultValue().orElseThrow()));
        assertThat(port).isPositive();
        assertThat(publishedPorts("read-service")).as("read-service ports: container side").containsKey(port);
        assertThat(healthcheckCommand("read-service")).as("read-service healthcheck").contains("/health/live").contains(Integer.toString(port));
    }

    @Test
    void buildContextsDockerfilesAndMountedFilesExist() throws IOException {
        for (String service : serviceNames()) {
            JsonNode build = services.path(service).path("build");
            if (build.isMissingNode()) {
                assertThat(services.path(service).path("image").asText()).as("%s has neither build nor image", service).isNotBlank();
            } else {
                Path context = root.resolve(build.isTextual() ? build.asText() : build.path("context").asText(".")).normalize();
                assertThat(context).as("%s: build context", service).isDirectory();
                Path dockerfile = context.resolve(build.path("dockerfile").asText("Dockerfile")).normalize();
                assertThat(dockerfile).as("%s: dockerfile", service).isRegularFile();
                String module = build.path("args").path("MODULE").asText(null);
                if (APPS.containsKey(service)) {
                    assertThat(module).as("%s: build argument MODULE", service).isEqualTo(MODULE_OF.getOrDefault(service, service));
                }
                if (module != null) assertModuleBuildsWhatTheDockerfileCopies(service, context, dockerfile, module);
            }
            for (JsonNode volume : services.path(service).path("volumes")) {
                String source = interpolate(volume.isTextual() ? volume.asText() : volume.path("source").asText(), Map.of()).split(":")[0];
                if (source.startsWith(".") || source.startsWith("/")) {
                    assertThat(root.resolve(source).normalize()).as("%s mounts %s", service, source).exists();
                }
            }
        }
        Path dockerignore = root.resolve(".dockerignore");
        assertThat(dockerignore).isRegularFile();
        List<String> ignored = Files.readAllLines(dockerignore).stream().map(String::trim)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        assertThat(ignored).as(".dockerignore").contains(".git", ".tally/", "**/target/", "**/node_modules/");
        assertThat(ignored).as(".dockerignore must keep what the build needs")
                .noneMatch(l -> l.contains("mvnw") || l.contains(".mvn") || l.contains("pom") || l.contains("src") || l.equals("*"));
    }

    /**
     * The user's rules directory (TALLY_RULES_DIR, default ./rules) is mounted read-only where every service that reads
     * rules or sources looks for them, the three name the same files (TALLY_RULES_FILE, TALLY_SOURCES_FILE), the
     * shipped files by default, and ingest-app starts only after rules-check has passed.
     */
    @Test
    void theUsersRulesDirectoryIsMountedWhereEveryReaderLooks() {
        Map<String, String> user = Map.of("TALLY_RULES_DIR", "/srv/shop-rules", "TALLY_RULES_FILE", "shop-rules.yaml",
                "TALLY_SOURCES_FILE", "shop-sources.yaml");
        for (var reader : RULES_READERS.entrySet()) {
            String service = reader.getKey();
            assertThat(mounts(service, Map.of())).as("%s mounts", service).containsEntry(RULES_MOUNT, "./rules");
            assertThat(mounts(service, user)).as("%s mounts with TALLY_RULES_DIR", service).containsEntry(RULES_MOUNT, "/srv/shop-rules");
            assertThat(services.path(service).path("volumes").toString()).as("%s: read-only", service).contains(RULES_MOUNT + ":ro");
            for (String variable : reader.getValue()) {
                boolean sources = variable.contains("SOURCES");
                String shipped = environment(service).get(variable);
                assertThat(shipped).as("%s: %s", service, variable).isEqualTo(RULES_MOUNT + (sources ? "/default-sources.yaml" : "/default-rules.yaml"));
                assertThat(root.resolve("rules").resolve(Path.of(shipped).getFileName())).as("%s: %s in ./rules", service, variable).isRegularFile();
                assertThat(environment(service, user).get(variable)).as("%s: %s with the user's files", service, variable)
                        .isEqualTo(RULES_MOUNT + (sources ? "/shop-sources.yaml" : "/shop-rules.yaml"));
            }
        }
        assertThat(environment("read-service", user).get("TALLY_READ_RULES_FILE")).isEqualTo(environment("ingest-app", user).get("TALLY_INGEST_RULES_FILE"));
        assertThat(dependsOn("ingest-app")).containsEntry("rules-check", "service_completed_successfully");
        assertThat(services.path("rules-check").path("command").toString()).isEqualTo("[\"rules\",\"check\"]");
    }

    /**
     * Entra ID on the compose path: ingest-app and read-service take the Cosmos endpoint and authentication settings
     * from the shell or .env under the apps' own names, with the emulator and its key as the default and no secret in
     * the file; a service principal's settings load as such in both.
     */
    @Test
    void cosmosWithEntraIdComesFromTheHostEnvironment() {
        Map<String, String> principal = Map.of("TALLY_COSMOS_ENDPOINT", "https://shop.documents.azure.com:443/",
                "TALLY_COSMOS_AUTH", "service-principal-secret", "TALLY_COSMOS_AUTH_TENANT_ID", "tenant-7",
                "TALLY_COSMOS_AUTH_CLIENT_ID", "client-7", "TALLY_COSMOS_AUTH_CLIENT_SECRET", "secret-from-the-shell",
                "TALLY_COSMOS_CREATE_IF_MISSING", "false");
        for (String app : List.of("ingest-app", "read-service")) {
            JsonNode declared = services.path(app).path("environment");
            for (Setting<?> s : COSMOS_FROM_HOST) {
                assertThat(declared.path(s.envName()).asText()).as("%s: %s from the host", app, s.envName())
                        .startsWith("${" + s.envName() + ":-");
            }
            assertThat(environment(app).get(io.tally.cosmos.CosmosAuth.CLIENT_SECRET.envName())).as("%s: no secret in the file", app).isEmpty();
            CosmosSettings emulator = app.equals("read-service") ? ReadSettings.load(new String[0], environment(app)).cosmos()
                    : IngestSettings.load(new String[0], environment(app)).cosmos();
            assertThat(emulator.auth().mode()).isEqualTo(io.tally.cosmos.CosmosAuth.Mode.KEY);
            CosmosSettings azure = app.equals("read-service") ? ReadSettings.load(new String[0], environment(app, principal)).cosmos()
                    : IngestSettings.load(new String[0], environment(app, principal)).cosmos();
            assertThat(azure.endpoint()).isEqualTo("https://shop.documents.azure.com:443/");
            assertThat(azure.createIfMissing()).isFalse();
            assertThat(azure.auth()).extracting(a -> a.mode(), a -> a.tenantId(), a -> a.clientId(), a -> a.clientSecret())
                    .containsExactly(io.tally.cosmos.CosmosAuth.Mode.SERVICE_PRINCIPAL_SECRET, "tenant-7", "client-7", "secret-from-the-shell");
        }
    }

    @Test
    void everyLongRunningServiceHasAHealthcheck() {
        for (String service : serviceNames()) {
            if (isOneShot(service)) continue;
            assertThat(hasHealthcheck(service)).as("%s runs until stopped but has no healthcheck", service).isTrue();
        }
        assertThat(isOneShot("ingest-app")).as("ingest-app runs until stopped").isFalse();
        assertThat(isOneShot("read-service")).as("read-service runs until stopped").isFalse();
        assertThat(isOneShot("loadgen")).as("loadgen is one run").isTrue();
    }

    /**
     * The topics come from ingest-app's topics command (the specs of {@link Topics}, which ingest-app checks at start
     * too), after the broker runs transaction.version=1, and before anything produces to or reads from them.
     */
    @Test
    void topicsComeFromIngestAppsTopicsCommandBeforeAnythingUsesThem() {
        assertThat(strings(services.path("topics").path("command"))).as("topics: the jar's command").containsExactly("topics");
        assertThat(image("topics")).as("topics runs ingest-app's image").isEqualTo(image("ingest-app"));
        assertThat(isOneShot("topics")).as("topics is one run").isTrue();

        String features = servicesWithImage("apache/kafka:").stream().filter(s -> !s.equals("kafka")).findFirst()
                .orElseGet(() -> fail("no one-shot service with the broker's image sets transaction.version"));
        assertThat(image(features)).as("%s uses the broker's image (same CLI version)", features).isEqualTo(image("kafka"));
        assertThat(String.join(" ", strings(services.path(features).path("entrypoint"))))
                .as("%s entrypoint", features).contains("kafka-features.sh").contains("downgrade").contains("transaction.version=1");
        assertThat(dependsOn("topics")).as("topics start after %s", features).containsEntry(features, "service_completed_successfully");

        String loadgenTopic = environment("loadgen").getOrDefault(LoadgenSettings.TOPIC.envName(), LoadgenSettings.TOPIC.defaultValue().orElseThrow());
        assertThat(loadgenTopic).as("loadgen produces to").isEqualTo(Topics.TRANSACTIONS);
        for (String app : List.of("ingest-app", "loadgen", "demo")) {
            assertThat(dependsOn(app)).as("%s starts after the topics exist", app).containsEntry("topics", "service_completed_successfully");
        }
    }

    /**
     * The demo service runs local/demo.sh --attach: it reads ingest-app's metrics and queries read-service
     * while they run, and prints curl commands for the host. Its URLs must name those services on ports
     * they serve, it must wait until both are healthy, and every option it passes must be one the script
     * accepts (an unknown one stops the script at once).
     */
    @Test
    void theDemoDrivesIngestAppAndReadServiceThroughAddressesTheyServe() throws IOException {
        Map<String, String> options = demoOptions();
        assertThat(options).as("demo options").containsKeys("--attach", "--loadgen-jar", "--metrics-url", "--read-url", "--show-read-url");

        URI metrics = URI.create(options.get("--metrics-url"));
        Map<String, String> ingest = environment("ingest-app");
        int metricsPort = Integer.parseInt(ingest.getOrDefault(SinkSettings.METRICS_PORT.envName(),
                SinkSettings.METRICS_PORT.defaultValue().orElseThrow()));
        assertThat(metrics.getHost()).as("--metrics-url host").isEqualTo("ingest-app");
        assertThat(metrics.getPort()).as("--metrics-url port = ingest-app's %s", SinkSettings.METRICS_PORT.envName()).isEqualTo(metricsPort);
        assertThat(metrics.getPath()).isEqualTo("/metrics");
        assertThat(declaredPorts("ingest-app")).as("ingest-app exposes its metrics port").contains(metricsPort);
        assertThat(healthcheckCommand("ingest-app")).as("ingest-app healthcheck").contains("/metrics").contains(Integer.toString(metricsPort));

        URI read = URI.create(options.get("--read-url"));
        assertServicePort("demo", read.getHost(), read.getPort());
        assertThat(read.getHost()).as("--read-url host").isEqualTo("read-service");
        URI shown = URI.create(options.get("--show-read-url"));
        assertThat(shown.getHost()).as("--show-read-url is for the host").isEqualTo("127.0.0.1");
        assertThat(publishedPorts("read-service")).as("--show-read-url: read-service's published port").containsEntry(read.getPort(), shown.getPort());

        assertThat(dependsOn("demo")).as("demo starts when both apps are healthy")
                .containsEntry("ingest-app", "service_healthy").containsEntry("read-service", "service_healthy");
        assertThat(isOneShot("demo")).as("the demo is one run").isTrue();

        String script = Files.readString(root.resolve("local/demo.sh"));
        for (String option : options.keySet()) {
            assertThat(script).as("local/demo.sh accepts %s", option).containsPattern("(?m)^\\s*" + java.util.regex.Pattern.quote(option) + "[=)*]");
        }
        assertThat(services.path("demo").path("build").path("target").asText()).as("demo: build target").isEqualTo("demo");
    }

    /** The demo image: a stage of the app Dockerfile that copies the script, its library and the rules. */
    @Test
    void theDemoImageHoldsTheScriptItRuns() throws IOException {
        Path dockerfile = root.resolve(services.path("demo").path("build").path("dockerfile").asText());
        List<String> stage = dockerfileStage(dockerfile, services.path("demo").path("build").path("target").asText());
        assertThat(stage).as("%s: stage demo", dockerfile).isNotEmpty();
        List<String> copied = new ArrayList<>();
        for (String line : stage) {
            String[] words = line.trim().split("\\s+");
            if (words[0].equals("COPY") && !words[1].startsWith("--from")) copied.add(words[1]);
        }
        assertThat(copied).as("%s: demo stage copies", dockerfile).contains("local/demo.sh", "local/lib/common.sh", "rules/default-rules.yaml");
        for (String source : copied) assertThat(root.resolve(source)).as("%s copies %s", dockerfile, source).isRegularFile();
        String entrypoint = stage.stream().filter(l -> l.startsWith("ENTRYPOINT")).findFirst().orElse("");
        assertThat(entrypoint).as("demo entrypoint").contains("local/demo.sh").contains("--attach");
        // The default target (the last stage) must stay the app image the other services use.
        List<String> lines = Files.readAllLines(dockerfile);
        String lastFrom = lines.stream().filter(l -> l.startsWith("FROM ")).reduce((a, b) -> b).orElseThrow();
        assertThat(lastFrom).as("%s: last stage", dockerfile).doesNotContainIgnoringCase(" AS demo");
    }

    @Test
    void imagesArePinned() {
        for (String service : serviceNames()) {
            String image = image(service);
            if (image == null || services.path(service).has("build")) continue;
            int slash = image.lastIndexOf('/');
            int colon = image.lastIndexOf(':');
            assertThat(colon).as("%s: image %s has no tag", service, image).isGreaterThan(slash);
            assertThat(image.substring(colon + 1)).as("%s: image %s", service, image).isNotEqualTo("latest");
        }
    }

    // --- address checks ------------------------------------------------------------------------------

    /** Every entry of a bootstrap list names the broker service, a port it listens on, and is advertised as such. */
    private static void assertKafkaAddresses(String from, String bootstrap) {
        for (String entry : bootstrap.split(",")) {
            String hostPort = entry.trim().replaceFirst("^[A-Za-z_]+://", "");
            int colon = hostPort.lastIndexOf(':');
            assertThat(colon).as("%s: Kafka address %s has no port", from, entry).isPositive();
            String host = hostPort.substring(0, colon);
            int port = Integer.parseInt(hostPort.substring(colon + 1));
            assertServicePort(from, host, port);
            Map<String, String> broker = environment(host);
            assertThat(broker).as("%s: %s is not a Kafka broker (no KAFKA_LISTENERS)", from, host).containsKey("KAFKA_LISTENERS");
            Map<String, String> listeners = listenerMap(broker.get("KAFKA_LISTENERS"));
            String listener = listeners.entrySet().stream().filter(e -> portOf(e.getValue()) == port).map(Map.Entry::getKey)
                    .findFirst().orElseGet(() -> fail("%s: no listener of %s on port %d: %s", from, host, port, listeners));
            assertThat(broker.getOrDefault("KAFKA_CONTROLLER_LISTENER_NAMES", "")).as("%s: %s:%d is the controller listener", from, host, port)
                    .doesNotContain(listener);
            // Clients reconnect to the advertised address: it must be the same service address.
            Map<String, String> advertised = listenerMap(broker.getOrDefault("KAFKA_ADVERTISED_LISTENERS", ""));
            assertThat(advertised.get(listener)).as("%s: advertised address of listener %s", from, listener).isEqualTo(host + ":" + port);
        }
    }

    /** host is a compose service that declares port (expose/ports) and actually listens on it. */
    private static void assertServicePort(String from, String host, int port) {
        assertThat(serviceNames()).as("%s: host %s is not a compose service", from, host).contains(host);
        assertThat(port).as("%s: address of %s has no explicit port", from, host).isPositive();
        assertThat(declaredPorts(host)).as("%s: %s does not expose port %d", from, host, port).contains(port);
        assertThat(listeningPorts(host)).as("%s: %s does not listen on port %d", from, host, port).contains(port);
        if (!from.equals(host)) {
            assertThat(dependsTransitivelyOn(from, host)).as("%s uses %s but does not start after it", from, host).isTrue();
        }
    }

    private static void assertModuleBuildsWhatTheDockerfileCopies(String service, Path context, Path dockerfile, String module) {
        Path pom = context.resolve(module).resolve("pom.xml");
        assertThat(pom).as("%s: MODULE=%s is not a module directory with a pom.xml", service, module).isRegularFile();
        try {
            String pomText = Files.readString(pom);
            assertThat(pomText).as("%s: artifactId", pom).contains("<artifactId>" + module + "</artifactId>");
            assertThat(pomText).as("%s: the jar is named after the artifactId", pom).contains("<finalName>${project.artifactId}</finalName>");
            assertThat(pomText).as("%s: runtime dependencies are copied to target/lib", pom)
                    .contains("copy-dependencies").contains("<outputDirectory>${project.build.directory}/lib</outputDirectory>")
                    .contains("<classpathPrefix>lib/</classpathPrefix>");
            String text = Files.readString(dockerfile);
            assertThat(text).as("%s copies the module's jar and lib directory", dockerfile)
                    .contains("${MODULE}/target/${MODULE}.jar").contains("${MODULE}/target/lib/")
                    .contains("./mvnw").contains("-pl \"${MODULE}\" -am").contains("-DskipTests");
            assertThat(root.resolve("mvnw")).isRegularFile();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    // --- compose model helpers -----------------------------------------------------------------------

    /** The demo's options: the Dockerfile stage's ENTRYPOINT words after the script, then compose's command. */
    private static Map<String, String> demoOptions() throws IOException {
        List<String> words = new ArrayList<>();
        Path dockerfile = root.resolve(services.path("demo").path("build").path("dockerfile").asText());
        String entrypoint = dockerfileStage(dockerfile, "demo").stream().filter(l -> l.startsWith("ENTRYPOINT")).findFirst().orElse("[]");
        JsonNode exec = new ObjectMapper().readTree(entrypoint.substring("ENTRYPOINT".length()).trim());
        boolean afterScript = false;
        for (JsonNode w : exec) {
            if (afterScript) words.add(w.asText());
            afterScript |= w.asText().endsWith("demo.sh");
        }
        words.addAll(strings(services.path("demo").path("command")));
        Map<String, String> options = new LinkedHashMap<>();
        for (String w : words) {
            assertThat(w).as("demo argument").startsWith("--");
            int eq = w.indexOf('=');
            options.put(eq < 0 ? w : w.substring(0, eq), eq < 0 ? "" : w.substring(eq + 1));
        }
        return options;
    }

    /** Lines of the Dockerfile stage named {@code name} ("FROM ... AS name" up to the next FROM). */
    private static List<String> dockerfileStage(Path dockerfile, String name) throws IOException {
        List<String> stage = new ArrayList<>();
        boolean in = false;
        for (String line : Files.readAllLines(dockerfile)) {
            if (line.startsWith("FROM ")) in = line.matches("(?i)FROM\\s+\\S+\\s+AS\\s+" + java.util.regex.Pattern.quote(name) + "\\s*");
            else if (in && !line.isBlank() && !line.startsWith("#")) stage.add(line);
        }
        return stage;
    }

    private interface CosmosEnv {
        String ENDPOINT = CosmosSettings.ENDPOINT.envName();
        String MODE = CosmosSettings.MODE.envName();
    }

    private static Set<String> serviceNames() {
        Set<String> names = new LinkedHashSet<>();
        services.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static String image(String service) {
        JsonNode image = services.path(service).path("image");
        return image.isTextual() ? image.asText() : null;
    }

    private static List<String> servicesWithImage(String prefix) {
        return serviceNames().stream().filter(s -> image(s) != null && image(s).startsWith(prefix)).toList();
    }

    private static List<String> appsWith(String key) {
        return APPS.entrySet().stream().filter(e -> find(e.getValue(), key).isPresent()).map(Map.Entry::getKey).toList();
    }

    private static Optional<Setting<?>> find(List<Setting<?>> settings, String key) {
        return settings.stream().filter(s -> s.key().equals(key)).findFirst();
    }

    /** environment as a map (compose allows a mapping or a list of KEY=VALUE); a value-less key maps to null. */
    /** The service's environment as its container gets it when no variable is set in the shell or .env. */
    private static Map<String, String> environment(String service) {
        return environment(service, Map.of());
    }

    /** The service's environment as its container gets it with {@code host} in the shell or .env. */
    private static Map<String, String> environment(String service, Map<String, String> host) {
        JsonNode node = services.path(service).path("environment");
        Map<String, String> env = new TreeMap<>();
        if (node.isObject()) {
            node.fields().forEachRemaining(e -> env.put(e.getKey(), e.getValue().isNull() ? null : interpolate(e.getValue().asText(), host)));
        } else if (node.isArray()) {
            for (JsonNode item : node) {
                String s = item.asText();
                int eq = s.indexOf('=');
                env.put(eq < 0 ? s : s.substring(0, eq), eq < 0 ? null : interpolate(s.substring(eq + 1), host));
            }
        }
        return env;
    }

    /** Compose's interpolation: {@code ${NAME}}, {@code ${NAME:-default}} and {@code ${NAME-default}} from {@code host}. */
    static String interpolate(String value, Map<String, String> host) {
        var m = INTERPOLATION.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String set = host.get(m.group(1));
            String replacement = set != null && !set.isEmpty() ? set : m.group(2) == null ? "" : m.group(2);
            m.appendReplacement(out, java.util.regex.Matcher.quoteReplacement(replacement));
        }
        return m.appendTail(out).toString();
    }

    /** The service's bind mounts, target -> source, interpolated with {@code host}. */
    private static Map<String, String> mounts(String service, Map<String, String> host) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode volume : services.path(service).path("volumes")) {
            String[] parts = interpolate(volume.asText(), host).split(":");
            out.put(parts[1], parts[0]);
        }
        return out;
    }

    /** depends_on as dependency -> condition (the list form means service_started). */
    private static Map<String, String> dependsOn(String service) {
        JsonNode node = services.path(service).path("depends_on");
        Map<String, String> deps = new LinkedHashMap<>();
        if (node.isArray()) {
            node.forEach(n -> deps.put(n.asText(), "service_started"));
        } else if (node.isObject()) {
            node.fields().forEachRemaining(e -> deps.put(e.getKey(), e.getValue().path("condition").asText("service_started")));
        }
        return deps;
    }

    private static boolean dependsTransitivelyOn(String service, String target) {
        Set<String> seen = new HashSet<>();
        List<String> todo = new ArrayList<>(dependsOn(service).keySet());
        while (!todo.isEmpty()) {
            String next = todo.remove(todo.size() - 1);
            if (next.equals(target)) return true;
            if (seen.add(next) && services.has(next)) todo.addAll(dependsOn(next).keySet());
        }
        return false;
    }

    private static boolean isOneShot(String service) {
        return "no".equals(services.path(service).path("restart").asText(null));
    }

    private static boolean hasHealthcheck(String service) {
        JsonNode hc = services.path(service).path("healthcheck");
        if (hc.isMissingNode() || hc.path("disable").asBoolean(false)) return false;
        JsonNode test = hc.path("test");
        if (test.isTextual()) return !test.asText().isBlank(); // a string is run with the container's shell
        List<String> words = strings(test);
        return words.size() >= 2 && List.of("CMD", "CMD-SHELL").contains(words.get(0))
                && words.stream().skip(1).anyMatch(w -> !w.isBlank());
    }

    private static String healthcheckCommand(String service) {
        return String.join(" ", strings(services.path(service).path("healthcheck").path("test")));
    }

    private static List<String> strings(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node.isTextual()) out.add(node.asText());
        else node.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** Ports a service declares: expose plus the container side of ports. */
    private static Set<Integer> declaredPorts(String service) {
        Set<Integer> ports = new LinkedHashSet<>(publishedPorts(service).keySet());
        services.path(service).path("expose").forEach(n -> ports.add(Integer.parseInt(n.asText().replaceFirst("/.*", ""))));
        return ports;
    }

    /** container port -> host port, from the short ("127.0.0.1:8080:8080") or long syntax. */
    private static Map<Integer, Integer> publishedPorts(String service) {
        Map<Integer, Integer> ports = new LinkedHashMap<>();
        for (JsonNode n : services.path(service).path("ports")) {
            if (n.isObject()) {
                ports.put(n.path("target").asInt(), n.path("published").asInt(n.path("target").asInt()));
                continue;
            }
            String[] parts = n.asText().replaceFirst("/.*", "").split(":");
            assertThat(parts[parts.length - 1]).as("%s: port ranges are not supported here: %s", service, n.asText()).matches("[0-9]+");
            int container = Integer.parseInt(parts[parts.length - 1]);
            ports.put(container, parts.length > 1 ? Integer.parseInt(parts[parts.length - 2]) : container);
        }
        return ports;
    }

    /** Ports a service is configured to listen on, where its configuration says so; else its declared ports. */
    private static Set<Integer> listeningPorts(String service) {
        Map<String, String> env = environment(service);
        Set<Integer> ports = new LinkedHashSet<>();
        if (env.containsKey("KAFKA_LISTENERS")) {
            listenerMap(env.get("KAFKA_LISTENERS")).values().forEach(v -> ports.add(portOf(v)));
        } else if (env.containsKey("SCHEMA_REGISTRY_LISTENERS")) {
            for (String l : env.get("SCHEMA_REGISTRY_LISTENERS").split(",")) ports.add(URI.create(l.trim()).getPort());
        } else if (image(service) != null && image(service).startsWith(EMULATOR_IMAGE + ":")) {
            ports.add(Integer.parseInt(env.getOrDefault("PORT", "8081")));
        } else if (service.equals("read-service")) {
            ports.add(Integer.parseInt(env.getOrDefault(ReadSettings.PORT.envName(), ReadSettings.PORT.defaultValue().orElseThrow())));
        } else {
            ports.addAll(declaredPorts(service));
        }
        return ports;
    }

    /** "INTERNAL://:19092,HOST://127.0.0.1:9092" -> {INTERNAL=":19092", HOST="127.0.0.1:9092"}. */
    private static Map<String, String> listenerMap(String listeners) {
        Map<String, String> map = new LinkedHashMap<>();
        for (String l : listeners.split(",")) {
            if (l.isBlank()) continue;
            int sep = l.indexOf("://");
            assertThat(sep).as("listener %s", l).isPositive();
            map.put(l.substring(0, sep).trim(), l.substring(sep + 3).trim());
        }
        return map;
    }

    private static int portOf(String hostPort) {
        return Integer.parseInt(hostPort.substring(hostPort.lastIndexOf(':') + 1));
    }

    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("docker-compose.yml")) && Files.isRegularFile(dir.resolve("mvnw"))) return dir;
        }
        throw new AssertionError("no docker-compose.yml next to mvnw above " + Path.of("").toAbsolutePath());
    }
}
