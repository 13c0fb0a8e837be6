package io.tally.ingest.sink;

import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;

final class SinkFixtures {
    private SinkFixtures() {}

    /**
     * An entity bucket under a free-form {@code id}: the sink never parses ids, and short labels keep the scripted
     * statuses and the calls they produce readable.
     */
    static EntityBucket doc(String entity, String id, long ver) {
        String json = """
                {"pk": "d|%s", "id": "%s", "unit": "hour", "bucket": "2026-11-21T00:00:00Z", "ver": %d, "ttl": 3600,
                 "updatedAt": "2026-11-21T00:00:00Z", "grades": {"spend": [%d, "%d", "1", "%d"]},
                 "qualified": {"spend-per-sku": {"sku|1": [1, "1.0000"]}}}
                """.formatted(entity, id, ver, ver, ver, ver);
        return EntityBucketJson.read(json.getBytes(StandardCharsets.UTF_8));
    }

    static ConsumerRecord<String, byte[]> record(String topic, int partition, long offset, EntityBucket d) {
        return new ConsumerRecord<>(topic, partition, offset, BucketKey.updateKey(d.pk(), d.id()), EntityBucketJson.write(d));
    }
}
