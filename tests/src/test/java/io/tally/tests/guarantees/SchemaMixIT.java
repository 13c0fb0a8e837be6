package io.tally.tests.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.schemas.serde.AvroSerdeConfig;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.testsupport.LocalStackExtension;
import io.tally.testsupport.cosmos.LocalCosmos;
import io.tally.testsupport.kafka.TestKafka;
import io.tally.testsupport.pipeline.Pipeline;
import io.tally.testsupport.registry.LocalSchemaRegistry;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A producer upgraded to schema version 2 mid-stream (loadgen.schema.v2-from-fraction=0.5): the first
 * half of the records carry the v1 schema id, the second half the v2 id, registered on first use under
 * BACKWARD compatibility. The pipeline reads both with its v1 reader; every bucket equals the ground
 * truth and the DLQ holds exactly the expected records, as with one schema.
 */
@ExtendWith(LocalStackExtension.class)
class SchemaMixIT {
    private static final Logger log = LoggerFactory.getLogger(SchemaMixIT.class);

    @Test
    void v1AndV2EventsMixedMidStreamCountExactlyAsTheTruthSays(TestKafka kafka, LocalSchemaRegistry registry,
                                                                LocalCosmos cosmos, @TempDir Path dir) throws Exception {
        try (Pipeline p = new Pipeline("schemas", kafka.bootstrapServers(), registry, cosmos, dir).provisionTopics()) {
            p.start("ingest", "both");
            try (Pipeline.VersionWatch watch = p.watchVersions()) {
                p.awaitReady(Pipeline.START_TIMEOUT);
                CompletableFuture<Pipeline.Truth> produced = p.produceInBackground(
                        p.loadgen(10_000, 500, 81, "--loadgen.schema.v2-from-fraction=0.5"));
                Pipeline.Truth truth = produced.get(3, TimeUnit.MINUTES);
                truth.assertExercisesEverything();
                p.awaitConverged(truth, Duration.ofSeconds(240));
                assertThat(watch.regressions()).isEmpty();
            }

            SchemaRegistryClient client = new SchemaRegistryClient(registry.url());
            String subject = AvroSerdeConfig.subject(p.topics.transactions(), false);
            assertThat(client.latest(subject).version()).as("v2 was registered after v1 under %s", subject).isEqualTo(2);
            int v1 = client.register(subject, io.tally.schemas.avro.TransactionEvent.getClassSchema());
            int v2 = client.latest(subject).id();
            Map<Integer, Long> bySchemaId = recordsBySchemaId(p);
            log.info("schema mix: {} records with the v1 schema id {}, {} with the v2 schema id {}",
                    bySchemaId.getOrDefault(v1, 0L), v1, bySchemaId.getOrDefault(v2, 0L), v2);
            assertThat(bySchemaId.getOrDefault(v1, 0L)).as("v1 records").isGreaterThan(4_000);
            assertThat(bySchemaId.getOrDefault(v2, 0L)).as("v2 records").isGreaterThan(4_000);
        }
    }

    /** The schema id in each input record's wire-format header (malformed records included, with whatever they carry). */
    private static Map<Integer, Long> recordsBySchemaId(Pipeline p) {
        Map<Integer, Long> out = new TreeMap<>();
        p.readAll(p.topics.transactions(), r -> {
            byte[] v = r.value();
            if (v != null && v.length >= 5 && v[0] == 0) out.merge(ByteBuffer.wrap(v, 1, 4).getInt(), 1L, Long::sum);
        });
        return out;
    }
}
