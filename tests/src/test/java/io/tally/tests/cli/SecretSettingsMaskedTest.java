package io.tally.tests.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.config.Setting;
import io.tally.cosmos.CosmosSettings;
import io.tally.ingest.app.IngestSettings;
import io.tally.ingest.replay.ReplaySettings;
import io.tally.ingest.source.RulesCheckCommand;
import io.tally.ingest.topics.TopicsCommand;
import io.tally.loadgen.LoadgenSettings;
import io.tally.read.ReadSettings;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * No secret shows: settings marked secret keep their defaults out of {@code --help}; the settings objects the apps print
 * at start (and that end up in exception messages) show neither a secret setting's value nor a Kafka password passed
 * through with {@code kafka.}; and a secret setting that fails to load is named without its value.
 */
class SecretSettingsMaskedTest {
    static final String JAAS_PASSWORD = "jaas-pw-61d0";
    /** A value for every secret the apps take, each unique. */
    static final Map<String, String> SECRETS = Map.of(
            "cosmos.key", "cosmos-key-5a9b",
            "cosmos.auth.client-secret", "client-secret-c4e8",
            "schema.registry.basic-auth.user-info", "sr-user:sr-pw-2b7d",
            "kafka.sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"" + JAAS_PASSWORD + "\";",
            "kafka.ssl.truststore.password", "truststore-pw-8f03",
            "kafka.ssl.keystore.password", "keystore-pw-17ac",
            "kafka.producer.ssl.key.password", "key-pw-e95d");
    static final String API_KEYS = "api-key-3d6f,api-key-0c21";

    static final Map<String, List<Setting<?>>> APPS = new LinkedHashMap<>();

    static {
        APPS.put("ingest-app", IngestSettings.all());
        APPS.put("read-service", ReadSettings.all());
        APPS.put("loadgen", LoadgenSettings.ALL);
        APPS.put("rules check", RulesCheckCommand.SETTINGS);
        APPS.put("topics", TopicsCommand.SETTINGS);
    }

    @Test
    void helpHidesTheDefaultOfEverySecretSetting() {
        for (var app : APPS.entrySet()) {
            String help = Help.text("Usage: " + app.getKey() + "\n", app.getValue());
            for (Setting<?> s : app.getValue()) {
                if (!s.isSecret() || s.defaultValue().isEmpty()) continue;
                assertThat(help).as("%s --help", app.getKey()).contains("--" + s.key() + " (" + s.envName() + "), default hidden (secret)\n");
            }
        }
        assertThat(APPS.get("ingest-app")).as("ingest-app has secret settings").anyMatch(Setting::isSecret);
        assertThat(APPS.get("read-service")).as("read-service has secret settings").anyMatch(Setting::isSecret);
        assertThat(Help.text("u\n", IngestSettings.all())).doesNotContain(CosmosSettings.EMULATOR_KEY);
    }

    /** What ingest-app, read-service, loadgen and replay log at start is their settings objects: every secret masked. */
    @Test
    void theSettingsTheAppsPrintShowNoSecret() {
        String[] ingestFlags = flags(SECRETS, "--cosmos.auth=service-principal-secret", "--cosmos.auth.tenant-id=t",
                "--cosmos.auth.client-id=c", "--cosmos.create-if-missing=false");
        assertNoSecretIn("ingest-app settings", IngestSettings.load(ingestFlags, Map.of()).toString(), "sasl.jaas.config=****");
        assertNoSecretIn("replay settings", ReplaySettings.load(flags(SECRETS, "--from=2026-11-20T00:00:00Z", "--to=2026-11-21T00:00:00Z",
                "--cosmos.auth=service-principal-secret", "--cosmos.auth.tenant-id=t", "--cosmos.auth.client-id=c",
                "--cosmos.create-if-missing=false"), Map.of(), Instant.parse("2027-06-01T00:00:00Z")).toString(), "sasl.jaas.config=****");
        Map<String, String> readSecrets = Map.of("cosmos.key", SECRETS.get("cosmos.key"));
        assertNoSecretIn("read-service settings", ReadSettings.load(flags(readSecrets, "--read.auth.enabled=true"),
                Map.of(ReadSettings.AUTH_KEYS.envName(), API_KEYS)).toString(), "keys=2");
        Map<String, String> loadgenSecrets = new LinkedHashMap<>(SECRETS);
        loadgenSecrets.keySet().removeIf(k -> k.startsWith("cosmos."));
        assertNoSecretIn("loadgen settings", LoadgenSettings.load(flags(loadgenSecrets), Map.of()).toString(), "sasl.jaas.config=****");
    }

    @Test
    void aSecretThatFailsToLoadIsNamedWithoutItsValue() {
        String notUserInfo = "no-colon-secret-4e1a";
        assertThatThrownBy(() -> IngestSettings.load(new String[] {"--schema.registry.basic-auth.user-info=" + notUserInfo,
                "--kafka.sasl.jaas.config=" + SECRETS.get("kafka.sasl.jaas.config"), "--ingest.role=neither"}, Map.of()))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.getMessage())
                        .contains("schema.registry.basic-auth.user-info").contains("****").contains("ingest.role")
                        .doesNotContain(notUserInfo).doesNotContain(JAAS_PASSWORD));
        // A service principal without its tenant: the problem is reported, the secret that was given is not.
        assertThatThrownBy(() -> ReadSettings.load(new String[] {"--cosmos.auth=service-principal-secret", "--cosmos.auth.client-id=c",
                "--cosmos.create-if-missing=false"}, Map.of(CosmosSettings.KEY.envName(), "x", "TALLY_COSMOS_AUTH_CLIENT_SECRET", SECRETS.get("cosmos.auth.client-secret"))))
                .satisfies(e -> assertThat(e.getMessage()).contains("tenant").doesNotContain(SECRETS.get("cosmos.auth.client-secret")));
    }

    /** @param given what the print shows in a secret's place: proof the secrets were given and printed masked */
    private static void assertNoSecretIn(String what, String printed, String given) {
        List<String> values = new ArrayList<>(SECRETS.values());
        values.addAll(List.of(JAAS_PASSWORD, "sr-pw-2b7d", "api-key-3d6f", "api-key-0c21"));
        for (String v : values) assertThat(printed).as("%s print a secret", what).doesNotContain(v);
        assertThat(printed).as("%s: the settings were printed", what).contains(given);
    }

    private static String[] flags(Map<String, String> settings, String... more) {
        List<String> out = new ArrayList<>();
        settings.forEach((k, v) -> out.add("--" + k + "=" + v));
        out.addAll(List.of(more));
        return out.toArray(String[]::new);
    }
}
