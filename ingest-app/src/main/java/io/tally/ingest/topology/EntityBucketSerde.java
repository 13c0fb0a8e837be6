package io.tally.ingest.topology;

import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketJson;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * Entity buckets as a Kafka serde, in the document model's JSON form ({@link EntityBucketJson}): on
 * {@code bucket-updates}, which the sink (and any other program) reads, and in stage 5's store and its changelog,
 * so the store holds exactly the documents Cosmos gets. Plus the one header the topic carries.
 */
public final class EntityBucketSerde {
    /**
     * Header on a document's first update, the one that starts it: the sink writes it as a create rather than
     * probing with a conditional patch that can only answer 404 (a request unit for nothing). A create that
     * finds the document (409) falls back to the conditional patch, so a wrong hint costs what no hint did.
     */
    public static final String CREATED_HEADER = "tally.bucket.created";

    private EntityBucketSerde() {}

    /** Thread-safe: the topology's sink shares one serializer among all stream threads. */
    public static Serde<EntityBucket> serde() {
        return Serdes.serdeFrom(
                (topic, d) -> d == null ? null : EntityBucketJson.write(d),
                (topic, bytes) -> {
                    if (bytes == null) return null;
                    try {
                        return EntityBucketJson.decode(bytes);
                    } catch (IllegalArgumentException e) {
                        throw new SerializationException("Cannot decode an entity bucket on " + topic + ": " + e.getMessage(), e);
                    }
                });
    }
}
