package io.tally.ingest.topology;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.model.BucketDocument;
import java.io.IOException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * JSON bucket documents on {@code bucket-updates} and in the bucket store: the same shape Cosmos
 * stores, so the sink writes what it reads without a mapping step.
 */
public final class BucketDocumentSerde {
    /**
     * Header on a bucket's first update, the one that starts it: the sink writes it as a create rather than
     * probing with a conditional patch that can only answer 404 (a request unit for nothing). A create that
     * finds the bucket (409) falls back to the conditional patch, so a wrong hint costs what no hint did.
     */
    public static final String CREATED_HEADER = "tally.bucket.created";
    private static final ObjectMapper JSON = new ObjectMapper();

    private BucketDocumentSerde() {}

    public static Serde<BucketDocument> serde() {
        Serializer<BucketDocument> ser = (topic, doc) -> {
            if (doc == null) return null;
            try {
                return JSON.writeValueAsBytes(doc);
            } catch (IOException e) {
                throw new SerializationException("Cannot encode bucket " + doc.pk() + "|" + doc.id(), e);
            }
        };
        Deserializer<BucketDocument> de = (topic, bytes) -> {
            if (bytes == null) return null;
            try {
                return JSON.readValue(bytes, BucketDocument.class);
            } catch (IOException e) {
                throw new SerializationException("Cannot decode a bucket document on " + topic + ": " + e.getMessage(), e);
            }
        };
        return Serdes.serdeFrom(ser, de);
    }
}
