package io.tally.ingest.topology;

import io.tally.model.BucketDocument;
import io.tally.model.BucketDocumentJson;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * Bucket documents on {@code bucket-updates} as a Kafka serde: the document model's JSON form
 * ({@link BucketDocumentJson}, which the sink reads with too), plus the one header the topic carries.
 */
public final class BucketDocumentSerde {
    /**
     * Header on a bucket's first update, the one that starts it: the sink writes it as a create rather than
     * probing with a conditional patch that can only answer 404 (a request unit for nothing). A create that
     * finds the bucket (409) falls back to the conditional patch, so a wrong hint costs what no hint did.
     */
    public static final String CREATED_HEADER = "tally.bucket.created";

    private BucketDocumentSerde() {}

    /** Thread-safe: the topology's sink shares one serializer among all stream threads. */
    public static Serde<BucketDocument> serde() {
        return Serdes.serdeFrom(
                (topic, d) -> d == null ? null : BucketDocumentJson.write(d),
                (topic, bytes) -> {
                    if (bytes == null) return null;
                    try {
                        return BucketDocumentJson.read(bytes);
                    } catch (IllegalArgumentException e) {
                        throw new SerializationException("Cannot decode a bucket document on " + topic + ": " + e.getMessage(), e);
                    }
                });
    }
}
