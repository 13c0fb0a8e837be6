package io.tally.read;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import reactor.netty.http.server.HttpServerRequest;

/**
 * Optional API-key check of the /v1 routes. Keys come from {@code read.auth.api-keys} (environment)
 * or {@code read.auth.api-keys-file}. A presented key is hashed (SHA-256) and compared with every
 * configured key's hash by {@link MessageDigest#isEqual}, whose time depends only on the length of
 * the digests, which is fixed: neither which key matched nor how many leading bytes did leaks
 * through timing. Every configured key is compared, also after a match. Thread-safe, immutable.
 */
final class ApiKeyAuth {
    static final String HEADER = "X-API-Key";
    private static final String SCHEME = "ApiKey ";

    private final boolean enabled;
    private final List<byte[]> digests;

    ApiKeyAuth(ReadSettings.Auth settings) {
        this.enabled = settings.enabled();
        this.digests = settings.keys().stream().map(ApiKeyAuth::sha256).toList();
    }

    boolean enabled() {
        return enabled;
    }

    /** True when auth is off, or the request carries one of the configured keys. */
    boolean allows(HttpServerRequest req) {
        if (!enabled) return true;
        String presented = req.requestHeaders().get(HEADER);
        if (presented == null) {
            String authz = req.requestHeaders().get("Authorization");
            if (authz != null && authz.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
                presented = authz.substring(SCHEME.length()).trim();
            }
        }
        return presented != null && matches(presented);
    }

    boolean matches(String presented) {
        byte[] d = sha256(presented);
        boolean ok = false;
        for (byte[] k : digests) ok |= MessageDigest.isEqual(d, k); // no early exit
        return ok;
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
