package io.tally.schemas.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.common.errors.SerializationException;

/**
 * A registry call that failed, with the HTTP status (-1 when no answer came), the registry's error code
 * when it sent one (-1 otherwise) and a {@link Kind} to branch on. Only {@link #isRetriable()} failures
 * were retried by the client, and they are thrown after the retries ran out; every other kind is thrown
 * at once because repeating the request cannot change the answer.
 *
 * <p>Extends Kafka's {@link SerializationException} so a producer or a Streams task treats it as a
 * serialization failure.
 */
public final class SchemaRegistryException extends SerializationException {
    /** What went wrong, from the status and Confluent's error codes. */
    public enum Kind {
        /** 404 with error 40401. */
        SUBJECT_NOT_FOUND,
        /** 404 with error 40402. */
        VERSION_NOT_FOUND,
        /** 404 with error 40403: no schema has this id. */
        SCHEMA_NOT_FOUND,
        /** 404 without a known error code (wrong URL path, a proxy's 404 page). */
        NOT_FOUND,
        /** 409: the schema breaks the subject's compatibility level. */
        INCOMPATIBLE,
        /** 422 with error 42201. */
        INVALID_SCHEMA,
        /** Other 422 answers (invalid version, invalid compatibility level). */
        UNPROCESSABLE,
        /** 401: missing or wrong credentials. */
        UNAUTHORIZED,
        /** 403: the credentials lack a permission. */
        FORBIDDEN,
        /** Any other 4xx. */
        CLIENT_ERROR,
        /** 5xx: retried, then thrown. */
        SERVER_ERROR,
        /** No answer: connection refused, timeout, reset. Retried, then thrown. */
        UNREACHABLE,
        /** A 2xx answer that is not the JSON the API promises. */
        BAD_RESPONSE,
        /** The calling thread was interrupted; its interrupt flag is set again. */
        INTERRUPTED
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BODY_CHARS = 200;

    private final int status;
    private final int errorCode;
    private final Kind kind;

    public SchemaRegistryException(int status, int errorCode, String message, Throwable cause) {
        this(status, errorCode, classify(status, errorCode, cause), message, cause);
    }

    private SchemaRegistryException(int status, int errorCode, Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.errorCode = errorCode;
        this.kind = kind;
    }

    /** Builds the exception for a non-2xx answer; the body may be Confluent's JSON, or HTML/text from a proxy. */
    static SchemaRegistryException fromResponse(String request, int status, String body) {
        int code = -1;
        String detail;
        JsonNode json = parseJson(body);
        if (json != null && json.isObject() && (json.has("error_code") || json.has("message"))) {
            code = json.path("error_code").asInt(-1);
            detail = json.path("message").asText("");
        } else {
            detail = "(non-JSON body) " + shorten(body);
        }
        Kind kind = classify(status, code, null);
        String message = "Schema registry answered " + status + (code > 0 ? " (error " + code + ")" : "")
                + " to " + request + ": " + explain(kind) + (detail.isBlank() ? "" : " - " + detail);
        return new SchemaRegistryException(status, code, kind, message, null);
    }

    /** The same failure with a sentence in front saying what the caller was doing. */
    SchemaRegistryException withContext(String context) {
        return new SchemaRegistryException(status, errorCode, kind, context + ": " + getMessage(), this);
    }

    public int status() { return status; }

    public int errorCode() { return errorCode; }

    public Kind kind() { return kind; }

    /** True for I/O errors and 5xx: the registry may answer later; the request itself was fine. */
    public boolean isRetriable() {
        return kind == Kind.SERVER_ERROR || kind == Kind.UNREACHABLE;
    }

    private static Kind classify(int status, int code, Throwable cause) {
        if (cause instanceof InterruptedException) return Kind.INTERRUPTED;
        if (status < 0) return Kind.UNREACHABLE;
        if (status >= 500) return Kind.SERVER_ERROR;
        if (status >= 200 && status < 300) return Kind.BAD_RESPONSE;
        return switch (status) {
            case 401 -> Kind.UNAUTHORIZED;
            case 403 -> Kind.FORBIDDEN;
            case 404 -> switch (code) {
                case 40401 -> Kind.SUBJECT_NOT_FOUND;
                case 40402 -> Kind.VERSION_NOT_FOUND;
                case 40403 -> Kind.SCHEMA_NOT_FOUND;
                default -> Kind.NOT_FOUND;
            };
            case 409 -> Kind.INCOMPATIBLE;
            case 422 -> code == 42201 ? Kind.INVALID_SCHEMA : Kind.UNPROCESSABLE;
            default -> Kind.CLIENT_ERROR;
        };
    }

    private static String explain(Kind kind) {
        return switch (kind) {
            case SUBJECT_NOT_FOUND -> "subject not found";
            case VERSION_NOT_FOUND -> "version not found";
            case SCHEMA_NOT_FOUND -> "schema not found";
            case NOT_FOUND -> "not found (is the URL a schema registry?)";
            case INCOMPATIBLE -> "schema is incompatible with the subject's earlier versions";
            case INVALID_SCHEMA -> "invalid schema";
            case UNPROCESSABLE -> "request rejected";
            case UNAUTHORIZED -> "not authenticated (check " + AvroSerdeConfig.BASIC_AUTH_CREDENTIALS_SOURCE
                    + " and " + AvroSerdeConfig.BASIC_AUTH_USER_INFO + ")";
            case FORBIDDEN -> "forbidden (the credentials lack a permission for this subject or operation)";
            case SERVER_ERROR -> "server error";
            default -> "client error";
        };
    }

    private static JsonNode parseJson(String body) {
        if (body == null || body.isBlank()) return null;
        try {
            return JSON.readTree(body);
        } catch (Exception notJson) {
            return null;
        }
    }

    /** Tags out, whitespace collapsed, cut: an HTML error page becomes one readable line. */
    static String shorten(String body) {
        if (body == null || body.isBlank()) return "(empty)";
        String text = body.replaceAll("(?s)<(script|style)[^>]*>.*?</\\1>", " ")
                .replaceAll("<[^>]+>", " ")
                .replaceAll("\\s+", " ")
                .strip();
        return text.length() > MAX_BODY_CHARS ? text.substring(0, MAX_BODY_CHARS) + "..." : text;
    }
}
