package io.tally.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.avro.TransactionEvent;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Retry, backoff, failover and error-body handling of the client against {@link RegistryFaultStub}s,
 * which only ever fail. Real registry behaviour is tested in tests/…/serde/*IT.
 */
class SchemaRegistryClientFaultTest {
    private static final RetryPolicy FAST = new RetryPolicy(2, Duration.ofMillis(1), Duration.ofMillis(5));

    private static SchemaRegistryClient client(String urls) {
        return new SchemaRegistryClient(RegistryClientSettings.forUrls(urls).withRetry(FAST));
    }

    @Test
    void serverErrorsAreRetriedAFewTimesThenReported() {
        try (RegistryFaultStub stub = RegistryFaultStub.answering(503, "application/json",
                "{\"error_code\":50003,\"message\":\"Error while forwarding the request to the leader\"}")) {
            assertThatThrownBy(() -> client(stub.url()).schemaById(1))
                    .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                        assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.SERVER_ERROR);
                        assertThat(e.status()).isEqualTo(503);
                        assertThat(e.errorCode()).isEqualTo(50003);
                    })
                    .hasMessageContaining("Gave up after 3 calls to 1 registry URL(s) in 3 attempt(s)")
                    .hasMessageContaining("forwarding the request to the leader");
            assertThat(stub.seen()).hasSize(3).allSatisfy(s -> assertThat(s.path()).isEqualTo("/schemas/ids/1"));
        }
    }

    @Test
    void clientErrorsAreNotRetried() {
        try (RegistryFaultStub stub = RegistryFaultStub.answering(401, "text/html",
                "<html><body><h1>401 Authorization Required</h1></body></html>")) {
            assertThatThrownBy(() -> client(stub.url()).register("t-value", TransactionEvent.getClassSchema()))
                    .isInstanceOfSatisfying(SchemaRegistryException.class,
                            e -> assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.UNAUTHORIZED))
                    .hasMessageContaining("401 Authorization Required")
                    .hasMessageNotContaining("<h1>");
            assertThat(stub.seen()).hasSize(1);
            assertThat(stub.seen().get(0).method()).isEqualTo("POST");
            assertThat(stub.seen().get(0).path()).isEqualTo("/subjects/t-value/versions");
        }
    }

    @Test
    void timeoutsAreRetried() {
        try (RegistryFaultStub stub = RegistryFaultStub.slow(Duration.ofMillis(1500))) {
            RegistryClientSettings s = RegistryClientSettings.forUrls(stub.url()).withRetry(new RetryPolicy(1, Duration.ofMillis(1), Duration.ofMillis(1)));
            s = new RegistryClientSettings(s.urls(), s.userInfo(), s.retry(), s.cacheCapacity(), s.connectTimeout(),
                    Duration.ofMillis(200), s.latestCacheTtl(), s.missingIdCacheTtl(), s.missingCacheSize());
            SchemaRegistryClient c = new SchemaRegistryClient(s);
            assertThatThrownBy(() -> c.latest("t-value"))
                    .isInstanceOfSatisfying(SchemaRegistryException.class,
                            e -> assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.UNREACHABLE))
                    .hasMessageContaining("Gave up after 2 calls")
                    .hasMessageContaining("timed out");
        }
    }

    @Test
    void failsOverToTheNextUrlWithoutWaitingAndRemembersTheOneThatAnswered() throws IOException {
        int deadPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            deadPort = s.getLocalPort(); // closed again: connections are refused
        }
        try (RegistryFaultStub stub = RegistryFaultStub.answering(404, "application/json",
                "{\"error_code\":40403,\"message\":\"Schema 5 not found\"}")) {
            SchemaRegistryClient c = client("http://127.0.0.1:" + deadPort + "," + stub.url());
            // The 404 comes from the second URL: the refused connection to the first was failed over.
            assertThatThrownBy(() -> c.schemaById(5)).isInstanceOfSatisfying(SchemaRegistryException.class,
                    e -> assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.SCHEMA_NOT_FOUND));
            assertThatThrownBy(() -> c.schemaById(6)).isInstanceOf(SchemaRegistryException.class);
            assertThat(stub.seen()).hasSize(2);
        }
    }

    @Test
    void sendsBasicAuthFromTheUrlOrUserInfo() {
        try (RegistryFaultStub stub = RegistryFaultStub.answering(403, "text/plain", "nope")) {
            String withUser = stub.url().replace("http://", "http://fraud:pa%3Ass@");
            assertThatThrownBy(() -> client(withUser).schemaById(1)).hasMessageContaining("forbidden").hasMessageNotContaining("pa:ss");
            SchemaRegistryClient explicit = new SchemaRegistryClient(AvroSerdeConfig.parse(Map.of(
                    "schema.registry.url", stub.url(),
                    "basic.auth.credentials.source", "USER_INFO",
                    "basic.auth.user.info", "svc:secret")).registry());
            assertThatThrownBy(() -> explicit.schemaById(1)).isInstanceOf(SchemaRegistryException.class);
            assertThat(stub.seen()).extracting(RegistryFaultStub.Seen::authorization).containsExactly(
                    "Basic " + Base64.getEncoder().encodeToString("fraud:pa:ss".getBytes()),
                    "Basic " + Base64.getEncoder().encodeToString("svc:secret".getBytes()));
        }
    }

    @Test
    void deserializerReportsAnUnreachableRegistryAsNotTheRecordsFault() {
        try (RegistryFaultStub stub = RegistryFaultStub.answering(500, "text/plain", "boom")) {
            AvroDeserializer<Object> d = new AvroDeserializer<>(client(stub.url()));
            assertThatThrownBy(() -> d.deserialize("transactions", 2, 77L, new byte[] {0, 0, 0, 0, 1, 2}))
                    .isInstanceOfSatisfying(AvroDecodeException.class, e -> {
                        assertThat(e.problem()).isEqualTo(AvroDecodeException.Problem.REGISTRY_UNAVAILABLE);
                        assertThat(e.isBadInput()).isFalse();
                        assertThat(e.partition()).hasValue(2);
                        assertThat(e.offset()).hasValue(77L);
                        assertThat(e.getCause()).isInstanceOf(SchemaRegistryException.class);
                    })
                    .hasMessageStartingWith("Cannot decode Avro record on transactions-2@77 (writer schema id 1)");
        }
    }

    @Test
    void serializerNamesTopicAndSubjectWhenTheRegistryRefuses() {
        try (RegistryFaultStub stub = RegistryFaultStub.answering(401, "text/html", "<p>login first</p>")) {
            AvroSerializer<TransactionEvent> s = new AvroSerializer<>(client(stub.url()));
            s.configure(Map.of(), true);
            assertThatThrownBy(() -> s.serialize("transactions", SampleEvents.v1()))
                    .isInstanceOf(SchemaRegistryException.class)
                    .hasMessageContaining("on topic transactions (subject transactions-key)")
                    .hasMessageContaining("login first");
        }
    }

    @Test
    void anIdTheRegistryDoesNotKnowIsRememberedForTheMissingIdTtl() {
        try (RegistryFaultStub stub = RegistryFaultStub.answering(404, "application/json",
                "{\"error_code\":40403,\"message\":\"Schema 7 not found\"}")) {
            SchemaRegistryClient c = new SchemaRegistryClient(RegistryClientSettings.forUrls(stub.url()).withRetry(FAST)
                    .withMissingIdCacheTtl(Duration.ofMinutes(1)));
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> c.schemaById(7))
                        .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                            assertThat(e.kind()).isEqualTo(SchemaRegistryException.Kind.SCHEMA_NOT_FOUND);
                            assertThat(e.isRetriable()).isFalse();
                        })
                        .hasMessageContaining("Schema 7 not found");
            }
            assertThat(stub.seen()).as("one request for three lookups of id 7").hasSize(1);
            assertThatThrownBy(() -> c.schemaById(8)).isInstanceOf(SchemaRegistryException.class);
            assertThat(stub.seen()).as("another id is asked for").hasSize(2);
        }
    }

    @Test
    void withoutAMissingIdTtlEveryLookupAsksAndOutagesAreNeverRemembered() {
        try (RegistryFaultStub notFound = RegistryFaultStub.answering(404, "application/json",
                "{\"error_code\":40403,\"message\":\"Schema 7 not found\"}")) {
            SchemaRegistryClient c = client(notFound.url());
            assertThatThrownBy(() -> c.schemaById(7)).isInstanceOf(SchemaRegistryException.class);
            assertThatThrownBy(() -> c.schemaById(7)).isInstanceOf(SchemaRegistryException.class);
            assertThat(notFound.seen()).hasSize(2);
        }
        try (RegistryFaultStub down = RegistryFaultStub.answering(503, "application/json", "{\"error_code\":50003,\"message\":\"x\"}")) {
            SchemaRegistryClient c = new SchemaRegistryClient(RegistryClientSettings.forUrls(down.url()).withRetry(FAST)
                    .withMissingIdCacheTtl(Duration.ofMinutes(1)));
            assertThatThrownBy(() -> c.schemaById(7)).isInstanceOfSatisfying(SchemaRegistryException.class,
                    e -> assertThat(e.isRetriable()).isTrue());
            assertThatThrownBy(() -> c.schemaById(7)).isInstanceOfSatisfying(SchemaRegistryException.class,
                    e -> assertThat(e.isRetriable()).isTrue());
            assertThat(down.seen()).as("3 calls per lookup, both lookups").hasSize(6);
        }
    }
}
