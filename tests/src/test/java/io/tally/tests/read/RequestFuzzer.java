package io.tally.tests.read;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Generates requests to read-service from one seed: a tenth are valid reads of data the test stored (they must
 * answer 200), the rest are those requests taken apart — other methods, mangled or random path segments, raw
 * non-ASCII and badly percent-encoded bytes, parameters dropped, repeated, unknown or given garbage values,
 * odd and oversized headers, bodies. Every request stays within HTTP/1.1 framing (no space, CR or LF in the
 * target; request line and headers under the server's limits): what is fuzzed is the service, not Netty's parser.
 */
final class RequestFuzzer {
    /** One generated request and whether it is a valid read that must succeed. */
    record Case(RawHttp.Request request, boolean valid) {}

    static final List<String> METHODS = List.of("HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "get", "FOO", "M-SEARCH");
    private static final String[] GARBAGE = {"", "%", "%zz", "%2", "%00", "%2F", "%7C", "%FF%FE", "..", ".", "|", "||", "a|", "|b",
        "NaN", "-1", "0", "99999999999999999999", "1e309", "2026-13-45T99:99:99Z", "null", "{}", "[]", "<script>", "' OR 1=1 --",
        "%E2%82%AC", "%C3%28", "\u00e9", "SELECT * FROM c", "${jndi:ldap://x}", "../../etc/passwd", "a\u0000b"};

    private final Random random;
    private final List<String> validTargets;

    /** {@code validTargets}: request targets (path and query, encoded) that answer 200 with the test's data. */
    RequestFuzzer(long seed, List<String> validTargets) {
        this.random = new Random(seed);
        this.validTargets = List.copyOf(validTargets);
    }

    Case next() {
        String base = validTargets.get(random.nextInt(validTargets.size()));
        if (random.nextInt(10) == 0) return new Case(new RawHttp.Request("GET", ascii(base), Map.of(), null), true);
        String method = random.nextInt(2) == 0 ? "GET" : METHODS.get(random.nextInt(METHODS.size()));
        byte[] target = switch (random.nextInt(4)) {
            case 0 -> mangledPath(base);
            case 1 -> mangledQuery(base);
            case 2 -> randomTarget();
            default -> random.nextBoolean() ? ascii(base) : mangledQuery(new String(mangledPath(base), StandardCharsets.ISO_8859_1));
        };
        byte[] body = !method.equals("GET") && !method.equals("HEAD") && random.nextBoolean() ? bytes(random.nextInt(2000)) : null;
        return new Case(new RawHttp.Request(method, target, headers(), body), false);
    }

    /** One path segment (after /v1/... or /health/...) replaced, removed or added. */
    private byte[] mangledPath(String target) {
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        String query = q < 0 ? "" : target.substring(q);
        String[] segments = path.substring(1).split("/", -1);
        int i = random.nextInt(segments.length);
        String replaced = switch (random.nextInt(4)) {
            case 0 -> "";
            case 1 -> segments[i] + "/" + segment();
            default -> segment();
        };
        segments[i] = replaced;
        return ("/" + String.join("/", segments) + query).getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The query with a parameter dropped, repeated, renamed or given a garbage value, or replaced by raw bytes. */
    private byte[] mangledQuery(String target) {
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        Map<String, String> params = new LinkedHashMap<>();
        if (q >= 0) {
            for (String kv : target.substring(q + 1).split("&")) {
                int eq = kv.indexOf('=');
                params.put(eq < 0 ? kv : kv.substring(0, eq), eq < 0 ? "" : kv.substring(eq + 1));
            }
        }
        List<String> names = List.copyOf(params.keySet());
        String extra = "";
        switch (random.nextInt(6)) {
            case 0 -> { if (!names.isEmpty()) params.remove(names.get(random.nextInt(names.size()))); }
            case 1 -> { if (!names.isEmpty()) { String n = names.get(random.nextInt(names.size())); extra = "&" + n + "=" + value(); } }
            case 2 -> params.put(token(1 + random.nextInt(12)), value());
            case 3 -> {
                for (String n : List.of("grade", "unit", "from", "to", "last", "limit", "continuation", "qualifier", "at")) {
                    if (random.nextInt(3) == 0) params.put(n, value());
                }
            }
            case 4 -> { return (path + "?" + new String(rawBytes(1 + random.nextInt(300)), StandardCharsets.ISO_8859_1)).getBytes(StandardCharsets.ISO_8859_1); }
            default -> { if (!names.isEmpty()) params.put(names.get(random.nextInt(names.size())), value()); }
        }
        StringBuilder sb = new StringBuilder(path);
        String sep = "?";
        for (Map.Entry<String, String> e : params.entrySet()) {
            sb.append(sep).append(e.getKey());
            if (random.nextInt(8) != 0) sb.append('=').append(e.getValue());
            sep = "&";
        }
        return (sb + extra).getBytes(StandardCharsets.ISO_8859_1);
    }

    private byte[] randomTarget() {
        return switch (random.nextInt(4)) {
            case 0 -> ("/" + new String(rawBytes(random.nextInt(400)), StandardCharsets.ISO_8859_1)).getBytes(StandardCharsets.ISO_8859_1);
            case 1 -> ("/v1/" + segment() + "/" + segment()).getBytes(StandardCharsets.ISO_8859_1);
            case 2 -> ("/v1/buckets/" + segment() + "/" + segment() + "/" + segment()).getBytes(StandardCharsets.ISO_8859_1);
            default -> (random.nextBoolean() ? "*" : "/" + "../".repeat(1 + random.nextInt(5)) + token(5)).getBytes(StandardCharsets.ISO_8859_1);
        };
    }

    /** A path segment or parameter value: a known nasty one, random printable bytes, a long run, or unicode encoded. */
    private String segment() {
        return switch (random.nextInt(5)) {
            case 0 -> GARBAGE[random.nextInt(GARBAGE.length)].replace(" ", "%20").replace("\u0000", "%00");
            case 1 -> new String(rawBytes(1 + random.nextInt(60)), StandardCharsets.ISO_8859_1);
            case 2 -> "x".repeat(100 + random.nextInt(2000));
            case 3 -> URLEncoder.encode(unicode(1 + random.nextInt(30)), StandardCharsets.UTF_8);
            default -> URLEncoder.encode("fz|" + token(1 + random.nextInt(20)), StandardCharsets.UTF_8);
        };
    }

    private String value() {
        return random.nextInt(3) == 0 ? URLEncoder.encode(GARBAGE[random.nextInt(GARBAGE.length)], StandardCharsets.UTF_8) : segment();
    }

    private Map<String, String> headers() {
        Map<String, String> h = new LinkedHashMap<>();
        int n = random.nextInt(4);
        for (int i = 0; i < n; i++) {
            switch (random.nextInt(6)) {
                case 0 -> h.put("X-API-Key", printable(1 + random.nextInt(100)));
                case 1 -> h.put("Authorization", (random.nextBoolean() ? "ApiKey " : "Bearer ") + printable(random.nextInt(100)));
                case 2 -> h.put("Accept", random.nextBoolean() ? "application/xml" : printable(1 + random.nextInt(50)));
                case 3 -> h.put("Content-Type", random.nextBoolean() ? "application/json" : printable(1 + random.nextInt(50)));
                case 4 -> h.put("X-Fuzz-" + token(1 + random.nextInt(20)), printable(random.nextInt(2000))); // 3 stay under 8 KB
                default -> h.put(token(1 + random.nextInt(30)), printable(random.nextInt(200)));
            }
        }
        return h;
    }

    /** Bytes allowed in a request target by framing (no space, CR, LF, '#'): printable ASCII and raw high bytes. */
    private byte[] rawBytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            int c;
            do {
                c = random.nextInt(4) == 0 ? 0x80 + random.nextInt(0x80) : 0x21 + random.nextInt(0x5E);
            } while (c == '#');
            b[i] = (byte) c;
        }
        return b;
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private String printable(int n) {
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) sb.append((char) (0x20 + random.nextInt(0x5F)));
        return sb.toString().strip();
    }

    private String token(int n) {
        String chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) sb.append(chars.charAt(random.nextInt(chars.length())));
        return sb.toString();
    }

    private String unicode(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            int cp = switch (random.nextInt(4)) {
                case 0 -> 0x1F600 + random.nextInt(80);   // emoji, outside the BMP
                case 1 -> 0x4E00 + random.nextInt(500);   // CJK
                case 2 -> random.nextInt(0x20);           // control characters
                default -> 0xA0 + random.nextInt(0x200);  // Latin and others
            };
            sb.appendCodePoint(cp);
        }
        return sb.toString();
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
