package io.tally.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ApiKeyAuthTest {
    @Test
    void matchesOnlyConfiguredKeys() {
        ApiKeyAuth auth = new ApiKeyAuth(new ReadSettings.Auth(true, List.of("alpha", "beta-key")));
        assertThat(auth.matches("alpha")).isTrue();
        assertThat(auth.matches("beta-key")).isTrue();
        assertThat(auth.matches("alph")).isFalse();
        assertThat(auth.matches("alphaa")).isFalse();
        assertThat(auth.matches("")).isFalse();
    }

    @Test
    void authSettingsNeverPrintKeys() {
        assertThat(new ReadSettings.Auth(true, List.of("s3cret")).toString()).doesNotContain("s3cret");
    }
}
