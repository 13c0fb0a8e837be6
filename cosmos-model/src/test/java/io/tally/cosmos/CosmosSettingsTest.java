package io.tally.cosmos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.identity.ClientCertificateCredential;
import com.azure.identity.ClientSecretCredential;
import com.azure.identity.DefaultAzureCredential;
import com.azure.identity.ManagedIdentityCredential;
import io.tally.config.Config;
import io.tally.config.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CosmosSettingsTest {

    static CosmosSettings load(String... flags) {
        return CosmosSettings.from(Config.load(CosmosSettings.ALL, List.of(), flags, Map.of()));
    }

    static List<String> problems(String... flags) {
        try {
            load(flags);
        } catch (ConfigException e) {
            return e.problems();
        }
        throw new AssertionError("expected a ConfigException");
    }

    @Test
    void defaultsAreKeyAuthAndTheOld400RuContainer() {
        CosmosSettings s = load();
        assertThat(s.auth().usesKey()).isTrue();
        assertThat(s.key()).isEqualTo(CosmosSettings.EMULATOR_KEY);
        assertThat(s.createIfMissing()).isTrue();
        assertThat(s.throughput()).isEqualTo(new CosmosThroughput(CosmosThroughput.Mode.MANUAL, 400));
        assertThat(s.throughput().properties()).hasValueSatisfying(t -> assertThat(t.getManualThroughput()).isEqualTo(400));
    }

    @Test
    void everySettingIsDocumentedWithADefault() {
        CosmosSettings.ALL.forEach(s -> {
            assertThat(s.doc()).as(s.key()).hasSizeGreaterThan(10);
            assertThat(s.defaultValue()).as(s.key()).isPresent();
        });
    }

    @Test
    void autoscaleAndNone() {
        var auto = load("--cosmos.throughput=autoscale", "--cosmos.throughput.ru-per-second=4000").throughput();
        assertThat(auto.properties()).hasValueSatisfying(t -> assertThat(t.getAutoscaleMaxThroughput()).isEqualTo(4000));
        assertThat(load("--cosmos.throughput=none").throughput().properties()).isEmpty();
    }

    @Test
    void throughputOutsideTheServiceBoundsIsRefused() {
        assertThat(problems("--cosmos.throughput=autoscale")).singleElement().asString()
                .contains("cosmos.throughput.ru-per-second (400) is the autoscale maximum");
        assertThat(problems("--cosmos.throughput.ru-per-second=450")).singleElement().asString()
                .contains("multiple of 100");
        assertThat(problems("--cosmos.throughput=shared")).singleElement().asString()
                .contains("must be manual, autoscale or none");
    }

    @Test
    void entraIdWithCreateIfMissingIsRefusedAtStartNamingTheFix() {
        List<String> p = problems("--cosmos.auth=managed-identity");
        assertThat(p).singleElement().asString()
                .contains("cosmos.create-if-missing=true cannot work with cosmos.auth=managed-identity")
                .contains("403, sub-status 5300").contains("docs/azure.md").contains("TALLY_COSMOS_CREATE_IF_MISSING=false");
        assertThat(load("--cosmos.auth=managed-identity", "--cosmos.create-if-missing=false").auth().tokenCredential())
                .isInstanceOf(ManagedIdentityCredential.class);
    }

    @Test
    void servicePrincipalNeedsTenantClientAndSecretListedTogether() {
        assertThat(problems("--cosmos.auth=service-principal-secret", "--cosmos.create-if-missing=false"))
                .anyMatch(m -> m.startsWith("cosmos.auth.tenant-id: required with cosmos.auth=service-principal-secret"))
                .anyMatch(m -> m.startsWith("cosmos.auth.client-id: required"))
                .anyMatch(m -> m.startsWith("cosmos.auth.client-secret: required"))
                .hasSize(3);
        CosmosSettings s = load("--cosmos.auth=service-principal-secret", "--cosmos.create-if-missing=false",
                "--cosmos.auth.tenant-id=t1", "--cosmos.auth.client-id=c1", "--cosmos.auth.client-secret=s3cr3t",
                "--cosmos.auth.authority-host=https://login.example/", "--cosmos.auth.disable-instance-discovery=true");
        assertThat(s.auth().tokenCredential()).isInstanceOf(ClientSecretCredential.class);
        assertThat(s.toString()).contains("service-principal-secret").contains("c1").doesNotContain("s3cr3t");
        assertThat(s.auth().toString()).doesNotContain("s3cr3t");
    }

    @Test
    void certificateMustBeReadable(@TempDir Path dir) throws Exception {
        assertThat(problems("--cosmos.auth=service-principal-certificate", "--cosmos.create-if-missing=false",
                "--cosmos.auth.tenant-id=t", "--cosmos.auth.client-id=c", "--cosmos.auth.certificate-path=" + dir.resolve("none.pem")))
                .singleElement().asString().startsWith("cosmos.auth.certificate-path: cannot read");
        Path pem = Files.writeString(dir.resolve("sp.pem"), "not read until a token is asked for");
        assertThat(load("--cosmos.auth=service-principal-certificate", "--cosmos.create-if-missing=false",
                "--cosmos.auth.tenant-id=t", "--cosmos.auth.client-id=c", "--cosmos.auth.certificate-path=" + pem)
                .auth().tokenCredential()).isInstanceOf(ClientCertificateCredential.class);
    }

    @Test
    void unknownModeAndPlainHttpAuthorityAreRefused() {
        assertThat(problems("--cosmos.auth=password")).singleElement().asString()
                .contains("must be one of key, service-principal-secret");
        assertThat(problems("--cosmos.auth.authority-host=http://login.example/")).singleElement().asString()
                .contains("must be an https:// URL");
    }

    @Test
    void defaultChainBuilds() {
        assertThat(load("--cosmos.auth=default-chain", "--cosmos.create-if-missing=false").auth().tokenCredential())
                .isInstanceOf(DefaultAzureCredential.class);
    }
}
