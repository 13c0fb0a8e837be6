package io.tally.tests.aggregation;

import io.tally.ingest.topology.EntityBucketSerde;
import io.tally.ingest.topology.TallyTopology;
import io.tally.model.BucketDocument;
import io.tally.model.BucketKey;
import io.tally.model.EntityBucket;
import io.tally.testsupport.kafka.TestKafka;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The grade buckets (as the read API shows them) that entity buckets hold: what these tests' expectations are
 * written in, while the aggregation emits one document per entity bucket.
 */
final class GradeBuckets {
    private GradeBuckets() {}

    /** Key {@code pk|grade|unit|bucketIndex} -> the grade's bucket, over every document given. */
    static Map<String, BucketDocument> of(Iterable<EntityBucket> documents) {
        Map<String, BucketDocument> out = new HashMap<>();
        for (EntityBucket d : documents) {
            for (BucketDocument g : d.views()) {
                BucketDocument had = out.put(BucketKey.updateKey(g.pk(), g.id()), g);
                if (had != null) throw new AssertionError("grade bucket " + g.pk() + "|" + g.id() + " held by two documents");
            }
        }
        return out;
    }

    /** The grade buckets of every document in the bucket store of {@code driver}'s topology. */
    static Map<String, BucketDocument> inStore(TopologyTestDriver driver) {
        KeyValueStore<String, EntityBucket> store = driver.getKeyValueStore(TallyTopology.BUCKET_STORE);
        List<EntityBucket> documents = new ArrayList<>();
        try (var all = store.all()) {
            all.forEachRemaining(kv -> documents.add(kv.value));
        }
        return of(documents);
    }

    /** The grade buckets of the newest version (highest ver) of every document committed to {@code topic}. */
    static Map<String, BucketDocument> latestOn(String bootstrapServers, String topic) {
        Map<String, EntityBucket> latest = new HashMap<>();
        for (ConsumerRecord<String, EntityBucket> r : TestKafka.readCommitted(bootstrapServers, topic, new StringDeserializer(),
                EntityBucketSerde.serde().deserializer())) {
            latest.merge(r.key(), r.value(), (a, b) -> b.ver() > a.ver() ? b : a);
        }
        return of(latest.values());
    }
}
