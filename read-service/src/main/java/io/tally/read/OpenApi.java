package io.tally.read;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The OpenAPI 3.1 document of the API (resource {@code openapi.yaml}), loaded once; also served as JSON. */
final class OpenApi {
    private final byte[] yaml;
    private final byte[] json;

    private OpenApi(byte[] yaml, byte[] json) {
        this.yaml = yaml;
        this.json = json;
    }

    static OpenApi load() {
        try (InputStream in = OpenApi.class.getResourceAsStream("/openapi.yaml")) {
            if (in == null) throw new IllegalStateException("openapi.yaml is missing from the classpath");
            byte[] yaml = in.readAllBytes();
            byte[] json = new ObjectMapper().writeValueAsBytes(new ObjectMapper(new YAMLFactory()).readTree(yaml));
            return new OpenApi(yaml, json);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read openapi.yaml", e);
        }
    }

    byte[] yaml() { return yaml.clone(); }

    byte[] json() { return json.clone(); }
}
