package io.tally.tests.read;

import static io.tally.tests.read.ReadServiceFixture.bucket;
import static io.tally.tests.read.ReadServiceFixture.enc;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.BucketDocument;
import io.tally.model.TimeUnit;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.CosmosControl.Fault;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * read-service while every Cosmos request of its container takes 10 ms longer (a delay-only rule scoped to the
 * fixture's container): a burst of concurrent point reads and range queries is answered in full, each with the right
 * content, nothing shed or timed out, and the in-flight gauge is back to zero afterwards. The timeouts are generous
 * so a loaded machine cannot fail it; the speed under latency is measured by ReadLatencyBench, not asserted here.
 */
@ExtendWith(LocalStackExtension.class)
class ReadLatencyIT {
    private static final int BURST = 200;

    @Test
    void aBurstUnderTenMillisecondsOfAddedLatencyIsAnsweredInFull(LocalCosmos cosmos) throws Exception {
        CosmosControl control = cosmos.control();
        try (ReadServiceFixture f = new ReadServiceFixture(cosmos, Map.of(), "--read.request-timeout.ms=20000",
                "--read.cosmos.end-to-end-timeout.ms=15000")) {
            long h = TimeUnit.HOUR.bucketIndex(Instant.now());
            List<BucketDocument> docs = new ArrayList<>();
            for (int c = 0; c < 10; c++) {
                for (int i = 0; i < 24; i++) {
                    docs.add(bucket("it", "cust-" + c, "spend-per-customer", TimeUnit.HOUR, h - i, c + "." + i, 1, "1", "2"));
                }
            }
            f.write(docs);
            String rule = control.injectFault(Fault.delay(10).pathPrefix(f.pathPrefix()));
            try {
                List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
                List<String> expected = new ArrayList<>();
                for (int i = 0; i < BURST; i++) {
                    BucketDocument d = docs.get((i * 7) % docs.size());
                    String uri = i % 2 == 0 ? "/v1/buckets/" + enc(d.pk()) + "/" + enc(d.id())
                            : "/v1/buckets/" + enc(d.pk()) + "?grade=spend-per-customer&unit=hour&from="
                                    + TimeUnit.HOUR.bucketStart(h - 23) + "&to=" + TimeUnit.HOUR.bucketStart(h + 1);
                    expected.add(i % 2 == 0 ? d.id() : "24 items of " + d.pk());
                    answers.add(f.http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + f.read.port() + uri))
                            .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()));
                }
                for (int i = 0; i < BURST; i++) {
                    HttpResponse<String> r = answers.get(i).get();
                    assertThat(r.statusCode()).as("request %d (%s): %s", i, expected.get(i), r.body()).isEqualTo(200);
                    var body = ReadServiceFixture.JSON.readTree(r.body());
                    if (i % 2 == 0) assertThat(body.get("id").asText()).isEqualTo(expected.get(i));
                    else assertThat(body.get("buckets")).as(expected.get(i)).hasSize(24);
                }
                assertThat(control.faultHits(rule)).as("the delay rule hit the service's reads").isGreaterThanOrEqualTo(BURST);
            } finally {
                control.removeFault(rule);
            }
            String metrics = f.get("/metrics").body();
            assertThat(metrics).as("nothing left in flight").containsPattern("(?m)^tally_read_in_flight_requests(\\{[^}]*})? 0(\\.0)?$");
        }
    }
}
