package io.tally.schemas.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.common.errors.SerializationException;

/** A registry call that failed, with the HTTP status and the registry's error code when it sent one. */
public final class SchemaRegistryException extends SerializationException {
    private final int status;
    private final int errorCode;

    public SchemaRegistryException(int status, int errorCode, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.errorCode = errorCode;
    }

    static SchemaRegistryException fromResponse(String request, int status, String body) {
        int code = -1;
        String message = body == null ? "" : body;
        try {
            JsonNode json = new ObjectMapper().readTree(body);
            code = json.path("error_code").asInt(-1);
            message = json.path("message").asText(message);
        } catch (Exception notJson) {
            // Proxies and auth layers answer in HTML or plain text: keep the raw body, shortened.
            message = message.length() > 200 ? message.substring(0, 200) + "…" : message;
        }
        return new SchemaRegistryException(status, code,
                "Schema registry answered " + status + (code > 0 ? " (error " + code + ")" : "") + " to " + request + ": " + message,
                null);
    }

    public int status() { return status; }

    public int errorCode() { return errorCode; }
}
