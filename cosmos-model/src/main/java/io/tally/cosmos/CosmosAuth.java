package io.tally.cosmos;

import com.azure.core.credential.TokenCredential;
import com.azure.identity.AadCredentialBuilderBase;
import com.azure.identity.ClientCertificateCredentialBuilder;
import com.azure.identity.ClientSecretCredentialBuilder;
import com.azure.identity.DefaultAzureCredentialBuilder;
import com.azure.identity.ManagedIdentityCredentialBuilder;
import com.azure.identity.WorkloadIdentityCredentialBuilder;
import io.tally.config.Config;
import io.tally.config.Setting;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * How a Cosmos client proves who it is: the account key, or a Microsoft Entra ID identity through azure-identity.
 *
 * <p>An Entra ID token only authorizes data-plane operations (items, queries, metadata reads) and only for the
 * identity's role assignments (Cosmos DB Built-in Data Contributor, docs/azure.md); creating a database or a
 * container is a control-plane operation that Cosmos refuses to a token (403, sub-status 5300). That is why
 * {@link CosmosSettings#from} refuses {@code cosmos.create-if-missing=true} with any mode but {@code key}.
 */
public record CosmosAuth(Mode mode, String tenantId, String clientId, String clientSecret, String certificatePath,
                         String certificatePassword, String authorityHost, boolean disableInstanceDiscovery) {

    public enum Mode {
        KEY("key"),
        SERVICE_PRINCIPAL_SECRET("service-principal-secret"),
        SERVICE_PRINCIPAL_CERTIFICATE("service-principal-certificate"),
        MANAGED_IDENTITY("managed-identity"),
        WORKLOAD_IDENTITY("workload-identity"),
        DEFAULT_CHAIN("default-chain");

        private final String value;

        Mode(String value) { this.value = value; }

        public String value() { return value; }

        static Mode parse(String raw) {
            String v = raw.trim().toLowerCase(Locale.ROOT);
            return Arrays.stream(values()).filter(m -> m.value.equals(v)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("unknown mode " + raw));
        }
    }

    static final String MODES = String.join(", ", Arrays.stream(Mode.values()).map(Mode::value).toList());

    public static final Setting<String> MODE = Setting.string("cosmos.auth", "key",
            "How Tally authenticates to Cosmos: `key` (the account key, `cosmos.key`), or a Microsoft Entra ID identity: "
                    + "`service-principal-secret`, `service-principal-certificate`, `managed-identity`, `workload-identity` (AKS), "
                    + "`default-chain` (azure-identity's DefaultAzureCredential). An Entra ID identity needs a data-plane role "
                    + "assignment and a database and container provisioned beforehand, with `cosmos.create-if-missing=false` "
                    + "(docs/azure.md).")
            .validate(v -> Arrays.stream(Mode.values()).anyMatch(m -> m.value.equals(v.trim().toLowerCase(Locale.ROOT))),
                    "must be one of " + MODES);
    public static final Setting<String> TENANT_ID = Setting.optionalString("cosmos.auth.tenant-id", "",
            "Entra ID tenant (directory) id. Required for the service-principal modes; workload-identity and default-chain "
                    + "fall back to `AZURE_TENANT_ID`.");
    public static final Setting<String> CLIENT_ID = Setting.optionalString("cosmos.auth.client-id", "",
            "Application (client) id of the identity. Required for the service-principal modes; for managed-identity the "
                    + "client id of a user-assigned identity (empty = the system-assigned one); workload-identity and default-chain "
                    + "fall back to `AZURE_CLIENT_ID`.");
    public static final Setting<String> CLIENT_SECRET = Setting.optionalString("cosmos.auth.client-secret", "",
            "Client secret of the service principal (service-principal-secret); set it from the environment or a file.")
            .secret();
    public static final Setting<String> CERTIFICATE_PATH = Setting.optionalString("cosmos.auth.certificate-path", "",
            "service-principal-certificate: file holding the certificate and its private key, PEM or PKCS12 (.pfx/.p12).");
    public static final Setting<String> CERTIFICATE_PASSWORD = Setting.optionalString("cosmos.auth.certificate-password", "",
            "Password of a PKCS12 certificate file (empty for PEM).").secret();
    public static final Setting<String> AUTHORITY_HOST = Setting.optionalString("cosmos.auth.authority-host", "",
            "Entra ID authority host (HTTPS), e.g. `https://login.microsoftonline.us/` for Azure Government; empty = "
                    + "`AZURE_AUTHORITY_HOST`, else the Azure public cloud.")
            .validate(v -> v.isBlank() || v.trim().startsWith("https://"), "must be an https:// URL (azure-identity refuses others)");
    public static final Setting<Boolean> DISABLE_INSTANCE_DISCOVERY = Setting.bool("cosmos.auth.disable-instance-discovery", false,
            "Skip azure-identity's instance discovery (a metadata call to the public cloud that validates the authority). "
                    + "Needed for an authority it does not know: a private cloud, Azure Stack, the local stack's token issuer.");

    public static final List<Setting<?>> ALL = List.of(MODE, TENANT_ID, CLIENT_ID, CLIENT_SECRET, CERTIFICATE_PATH,
            CERTIFICATE_PASSWORD, AUTHORITY_HOST, DISABLE_INSTANCE_DISCOVERY);

    /** Reads the auth settings, adding every missing or contradictory value to {@code problems}. */
    static CosmosAuth from(Config c, List<String> problems) {
        CosmosAuth a = new CosmosAuth(Mode.parse(c.get(MODE)), c.get(TENANT_ID).trim(), c.get(CLIENT_ID).trim(),
                c.get(CLIENT_SECRET), c.get(CERTIFICATE_PATH).trim(), c.get(CERTIFICATE_PASSWORD), c.get(AUTHORITY_HOST).trim(),
                c.get(DISABLE_INSTANCE_DISCOVERY));
        switch (a.mode) {
            case SERVICE_PRINCIPAL_SECRET -> {
                requireSet(problems, a, TENANT_ID, a.tenantId);
                requireSet(problems, a, CLIENT_ID, a.clientId);
                requireSet(problems, a, CLIENT_SECRET, a.clientSecret);
            }
            case SERVICE_PRINCIPAL_CERTIFICATE -> {
                requireSet(problems, a, TENANT_ID, a.tenantId);
                requireSet(problems, a, CLIENT_ID, a.clientId);
                if (requireSet(problems, a, CERTIFICATE_PATH, a.certificatePath) && !Files.isReadable(Path.of(a.certificatePath))) {
                    problems.add(CERTIFICATE_PATH.key() + ": cannot read " + a.certificatePath);
                }
            }
            default -> { }
        }
        return a;
    }

    private static boolean requireSet(List<String> problems, CosmosAuth a, Setting<String> s, String value) {
        if (!value.isBlank()) return true;
        problems.add(s.key() + ": required with " + MODE.key() + "=" + a.mode.value + " (set --" + s.key() + " or " + s.envName() + ")");
        return false;
    }

    public boolean usesKey() { return mode == Mode.KEY; }

    /** The azure-identity credential of an Entra ID mode; tokens are fetched and refreshed by the Cosmos SDK through it. */
    public TokenCredential tokenCredential() {
        return switch (mode) {
            case KEY -> throw new IllegalStateException(MODE.key() + "=key has no token credential");
            case SERVICE_PRINCIPAL_SECRET -> entra(new ClientSecretCredentialBuilder()).clientSecret(clientSecret).build();
            case SERVICE_PRINCIPAL_CERTIFICATE -> {
                var b = entra(new ClientCertificateCredentialBuilder());
                String lower = certificatePath.toLowerCase(Locale.ROOT);
                if (lower.endsWith(".pfx") || lower.endsWith(".p12")) b.pfxCertificate(certificatePath).clientCertificatePassword(certificatePassword);
                else b.pemCertificate(certificatePath);
                yield b.build();
            }
            case MANAGED_IDENTITY -> {
                var b = new ManagedIdentityCredentialBuilder();
                if (!clientId.isEmpty()) b.clientId(clientId);
                yield b.build();
            }
            case WORKLOAD_IDENTITY -> {
                // The AKS webhook injects AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE and
                // AZURE_AUTHORITY_HOST into the pod; the builder reads them, a setting given here wins.
                yield entra(new WorkloadIdentityCredentialBuilder()).build();
            }
            case DEFAULT_CHAIN -> {
                var b = new DefaultAzureCredentialBuilder();
                if (!tenantId.isEmpty()) b.tenantId(tenantId);
                if (!clientId.isEmpty()) b.managedIdentityClientId(clientId).workloadIdentityClientId(clientId);
                if (!authorityHost.isEmpty()) b.authorityHost(authorityHost);
                if (disableInstanceDiscovery) b.disableInstanceDiscovery();
                yield b.build();
            }
        };
    }

    /** Tenant, client, authority and discovery on an Entra ID builder; an empty setting leaves the builder's own default. */
    private <T extends AadCredentialBuilderBase<T>> T entra(T b) {
        if (!tenantId.isEmpty()) b.tenantId(tenantId);
        if (!clientId.isEmpty()) b.clientId(clientId);
        if (!authorityHost.isEmpty()) b.authorityHost(authorityHost);
        if (disableInstanceDiscovery) b.disableInstanceDiscovery();
        return b;
    }

    /** For the start-up log: the mode and the public ids, never a secret. */
    public String describe() {
        if (mode == Mode.KEY) return "account key";
        StringBuilder sb = new StringBuilder("Entra ID (").append(mode.value);
        if (!tenantId.isEmpty()) sb.append(", tenant ").append(tenantId);
        if (!clientId.isEmpty()) sb.append(", client ").append(clientId);
        if (!authorityHost.isEmpty()) sb.append(", authority ").append(authorityHost);
        return sb.append(')').toString();
    }

    @Override
    public String toString() {
        return "CosmosAuth[" + describe() + "]";
    }
}
