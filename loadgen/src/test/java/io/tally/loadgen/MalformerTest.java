package io.tally.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.WireFormat;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

/** Offline check of each variant; MalformedRecordsIT checks the same against the real deserializer and registry. */
class MalformerTest {
    static final int ID = 7;

    @Test
    void truncatedAndCorruptBodiesKeepAValidHeaderButDoNotDecode() throws Exception {
        byte[] wire = wire();
        assertThat(decodeBody(wire).getTransactionId()).isEqualTo("tx-1"); // the original decodes
        for (Malformer.Variant v : new Malformer.Variant[] {Malformer.Variant.TRUNCATED, Malformer.Variant.CORRUPT_LENGTH}) {
            byte[] bad = Malformer.apply(new Malformer.Malformation(v, 3), wire);
            assertThat(WireFormat.schemaId(bad, "t")).isEqualTo(ID);
            assertThatThrownBy(() -> decodeBody(bad)).as(v.name()).isInstanceOf(Exception.class);
        }
    }

    @Test
    void unknownIdsAndMissingHeadersAreRejectedBeforeDecoding() throws Exception {
        byte[] wire = wire();
        byte[] unknown = Malformer.apply(new Malformer.Malformation(Malformer.Variant.UNKNOWN_SCHEMA_ID, 12), wire);
        assertThat(WireFormat.schemaId(unknown, "t")).isEqualTo(Malformer.UNKNOWN_ID_BASE + 12);
        assertThat(Arrays.copyOfRange(unknown, 5, unknown.length)).isEqualTo(Arrays.copyOfRange(wire, 5, wire.length));
        byte[] json = Malformer.apply(new Malformer.Malformation(Malformer.Variant.NOT_WIRE_FORMAT, 1), wire);
        assertThatThrownBy(() -> WireFormat.schemaId(json, "t")).isInstanceOf(SerializationException.class);
        assertThat(wire[0]).as("the input is not modified").isZero();
    }

    static byte[] wire() throws Exception {
        TransactionEvent e = TransactionEvent.newBuilder()
                .setTransactionId("tx-1").setEventTime(java.time.Instant.parse("2026-01-01T00:00:00Z")).setDomain("d")
                .setCustomerId("c-1").setEmail("c-1@example.com").setPostalCode(null).setSku("s").setMerchant("m")
                .setChannel("WEB").setAmount(new java.math.BigDecimal("12.3400")).setCurrency("USD").setStatus("APPROVED")
                .setAttributes(java.util.Map.of()).build();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(ByteBuffer.allocate(5).put((byte) 0).putInt(ID).array());
        BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
        new SpecificDatumWriter<TransactionEvent>(TransactionEvent.getClassSchema(), SpecificData.getForSchema(TransactionEvent.getClassSchema()))
                .write(e, enc);
        enc.flush();
        return out.toByteArray();
    }

    static TransactionEvent decodeBody(byte[] wire) throws Exception {
        var schema = TransactionEvent.getClassSchema();
        return new SpecificDatumReader<TransactionEvent>(schema, schema, SpecificData.getForSchema(schema))
                .read(null, DecoderFactory.get().binaryDecoder(wire, 5, wire.length - 5, null));
    }

}
