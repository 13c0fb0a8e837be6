package io.tally.ingest.sink;

import io.tally.model.BucketDocument;
import io.tally.model.BucketDocumentJson;
import io.tally.model.BucketKey;
import java.math.BigDecimal;
import org.apache.kafka.clients.consumer.ConsumerRecord;

final class SinkFixtures {
    private SinkFixtures() {}

    static BucketDocument doc(String entity, String id, long ver) {
        return new BucketDocument("d|" + entity, id, "spend", "hour", "2026-11-21T00:00:00Z", BigDecimal.valueOf(ver),
                ver, BigDecimal.ONE, BigDecimal.valueOf(ver), ver, 3600, "2026-11-21T00:00:00Z");
    }

    static ConsumerRecord<String, byte[]> record(String topic, int partition, long offset, BucketDocument d) {
        return new ConsumerRecord<>(topic, partition, offset, BucketKey.updateKey(d.pk(), d.id()), BucketDocumentJson.write(d));
    }
}
