package io.tally.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.schemas.serde.SchemaRegistryException.Kind;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The mapping from (status, Confluent error code, body) to Kind, retriability and message. */
class SchemaRegistryExceptionTest {

    private static SchemaRegistryException answer(int status, String body) {
        return SchemaRegistryException.fromResponse("GET http://reg/x", status, body);
    }

    @Test
    void mapsConfluentErrorCodes() {
        assertThat(answer(404, "{\"error_code\":40401,\"message\":\"Subject 't-value' not found.\"}").kind()).isEqualTo(Kind.SUBJECT_NOT_FOUND);
        assertThat(answer(404, "{\"error_code\":40402,\"message\":\"Version 9 not found.\"}").kind()).isEqualTo(Kind.VERSION_NOT_FOUND);
        assertThat(answer(404, "{\"error_code\":40403,\"message\":\"Schema 7 not found\"}").kind()).isEqualTo(Kind.SCHEMA_NOT_FOUND);
        assertThat(answer(404, "<html>Not Found</html>").kind()).isEqualTo(Kind.NOT_FOUND);
        assertThat(answer(409, "{\"error_code\":409,\"message\":\"Schema being registered is incompatible\"}").kind()).isEqualTo(Kind.INCOMPATIBLE);
        assertThat(answer(422, "{\"error_code\":42201,\"message\":\"Invalid schema\"}").kind()).isEqualTo(Kind.INVALID_SCHEMA);
        assertThat(answer(422, "{\"error_code\":42203,\"message\":\"Invalid compatibility level\"}").kind()).isEqualTo(Kind.UNPROCESSABLE);
        assertThat(answer(400, "").kind()).isEqualTo(Kind.CLIENT_ERROR);
        assertThat(answer(503, "").kind()).isEqualTo(Kind.SERVER_ERROR);
    }

    @Test
    void keepsStatusCodeAndMessageOfJsonBodies() {
        SchemaRegistryException e = answer(409, "{\"error_code\":409,\"message\":\"reader field riskScore has no default\"}");
        assertThat(e.status()).isEqualTo(409);
        assertThat(e.errorCode()).isEqualTo(409);
        assertThat(e.isRetriable()).isFalse();
        assertThat(e.getMessage()).contains("409", "GET http://reg/x", "incompatible", "riskScore has no default");
    }

    @Test
    void authFailuresWithHtmlBodiesReadAsOneLine() {
        String html = "<!DOCTYPE html><html><head><title>401 Authorization Required</title><style>body{x:y}</style></head>"
                + "<body>\n<center><h1>401   Authorization Required</h1></center>\n<hr><center>nginx</center></body></html>";
        SchemaRegistryException e = answer(401, html);
        assertThat(e.kind()).isEqualTo(Kind.UNAUTHORIZED);
        assertThat(e.errorCode()).isEqualTo(-1);
        assertThat(e.isRetriable()).isFalse();
        assertThat(e.getMessage())
                .contains("401", "not authenticated", "basic.auth.user.info", "(non-JSON body)",
                        "401 Authorization Required 401 Authorization Required nginx")
                .doesNotContain("<", "body{x:y}", "\n");
        assertThat(answer(403, "Forbidden by policy").getMessage()).contains("forbidden", "Forbidden by policy");
        assertThat(answer(403, "x".repeat(5000)).getMessage()).hasSizeLessThan(400).endsWith("...");
    }

    @Test
    void onlyServerErrorsAndMissingAnswersAreRetriable() {
        assertThat(answer(500, "{}").isRetriable()).isTrue();
        assertThat(answer(502, "<html>Bad gateway</html>").isRetriable()).isTrue();
        assertThat(new SchemaRegistryException(-1, -1, "refused", new IOException("refused")).isRetriable()).isTrue();
        assertThat(new SchemaRegistryException(-1, -1, "interrupted", new InterruptedException()).kind()).isEqualTo(Kind.INTERRUPTED);
        assertThat(new SchemaRegistryException(-1, -1, "interrupted", new InterruptedException()).isRetriable()).isFalse();
        for (int status : new int[] {400, 401, 403, 404, 409, 422}) {
            assertThat(answer(status, "{}").isRetriable()).as("status %d", status).isFalse();
        }
    }

    @Test
    void contextKeepsKindAndCause() {
        SchemaRegistryException e = answer(404, "{\"error_code\":40401,\"message\":\"Subject not found\"}");
        SchemaRegistryException wrapped = e.withContext("Cannot get a schema id for X on topic t");
        assertThat(wrapped.kind()).isEqualTo(Kind.SUBJECT_NOT_FOUND);
        assertThat(wrapped.getCause()).isSameAs(e);
        assertThat(wrapped.getMessage()).startsWith("Cannot get a schema id for X on topic t: Schema registry answered 404");
    }
}
