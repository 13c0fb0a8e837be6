package io.tally.tests.read;

import static io.tally.tests.read.ReadApiIT.assertProblem;
import static io.tally.tests.read.ReadServiceFixture.enc;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.config.ConfigException;
import io.tally.read.ReadSettings;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** API keys: from the environment or a file; /v1 needs one, health, metrics and OpenAPI do not. */
@ExtendWith(LocalStackExtension.class)
class ReadAuthIT {
    static final String POINT = "/v1/buckets/" + enc("it|cust-1") + "/" + enc("spend-per-customer|hour|1");

    @Test
    void keysFromTheEnvironment(LocalCosmos cosmos) {
        try (var f = new ReadServiceFixture(cosmos, Map.of("TALLY_READ_AUTH_API_KEYS", "key-one, key-two"), "--read.auth.enabled=true")) {
            var none = f.get(POINT);
            assertProblem(none, 401, "API key");
            assertThat(none.header("WWW-Authenticate")).startsWith("ApiKey");
            assertProblem(f.get(POINT, "X-API-Key", "key-three"), 401, "API key");
            assertProblem(f.get(POINT, "X-API-Key", "key-on"), 401, "API key");
            assertThat(f.get(POINT, "X-API-Key", "key-one").status()).as("a valid key passes (404: no such bucket)").isEqualTo(404);
            assertThat(f.get(POINT, "X-API-Key", "key-two").status()).isEqualTo(404);
            assertThat(f.get(POINT, "Authorization", "ApiKey key-two").status()).isEqualTo(404);
            assertProblem(f.get("/v1/rollups/" + enc("it|cust-1") + "?grade=spend-per-customer&unit=hour&last=1"), 401, "API key");
            assertProblem(f.get("/v1/rules"), 401, "API key");
            assertThat(f.get("/v1/rules", "X-API-Key", "key-one").status()).isEqualTo(200);
            assertThat(f.get("/health/live").status()).isEqualTo(200);
            assertThat(f.get("/health/ready").status()).isEqualTo(200);
            assertThat(f.get("/metrics").status()).isEqualTo(200);
            assertThat(f.get("/openapi.json").status()).isEqualTo(200);
            assertThat(f.get("/metrics").body()).contains("status=\"401\"");
        }
    }

    @Test
    void keysFromAFile(LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        Path file = dir.resolve("keys");
        Files.writeString(file, "# read-service keys\nfile-key-1\n\n  file-key-2  \n");
        try (var f = new ReadServiceFixture(cosmos, Map.of(), "--read.auth.enabled=true", "--read.auth.api-keys-file=" + file)) {
            assertProblem(f.get(POINT), 401, "API key");
            assertThat(f.get(POINT, "X-API-Key", "file-key-2").status()).isEqualTo(404);
            assertProblem(f.get(POINT, "X-API-Key", "# read-service keys"), 401, "API key");
        }
    }

    @Test
    void authOffNeedsNoKey(LocalCosmos cosmos) {
        try (var f = new ReadServiceFixture(cosmos, Map.of("TALLY_READ_AUTH_API_KEYS", "unused"))) {
            assertThat(f.get(POINT).status()).isEqualTo(404);
        }
    }

    @Test
    void authOnWithoutKeysFailsAtStart() {
        assertThatThrownBy(() -> ReadSettings.load(new String[] {"--read.auth.enabled=true"}, Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("no key is configured");
    }
}
