package io.tally.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.serde.SchemaRegistryClient;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.apache.avro.Conversions;
import org.apache.avro.data.TimeConversions;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.junit.jupiter.api.Test;

/**
 * Offline check of the mid-stream switch to schema version 2: the v2 records carry every v1 value, so
 * the pipeline's v1 reader sees exactly the event the ground truth counted. LoadgenIT and the guarantee
 * tests check the same through the real registry and pipeline.
 */
class RecordEncoderTest {

    @Test
    void v2RecordsResolveToTheSameEventWithTheV1Reader() throws Exception {
        RecordEncoder encoder = new RecordEncoder(new SchemaRegistryClient("http://127.0.0.1:1"), "t", 0);
        List<OutgoingRecord> records = EventGeneratorTest.generate(EventGeneratorTest.settings("--loadgen.events=500",
                "--loadgen.invalid.fraction=0.05", "--loadgen.duplicate.fraction=0.05"));
        int withDevice = 0;
        for (OutgoingRecord r : records) {
            GenericRecord v2 = encoder.asV2(r.event());
            assertThat(v2.getSchema().getField("loyaltyTier")).isNotNull();
            if (v2.get("deviceId") != null) withDevice++;
            TransactionEvent read = readAsV1(v2);
            assertThat(read).as("record %d", r.sequence()).isEqualTo(r.event());
        }
        assertThat(withDevice).as("the new fields carry values, not only their defaults").isPositive();
    }

    @Test
    void theSwitchPointIsAShareOfThePlannedRecords() {
        assertThat(EventGeneratorTest.settings().firstV2Sequence(1000)).as("default: never").isEqualTo(1000);
        assertThat(EventGeneratorTest.settings("--loadgen.schema.v2-from-fraction=0.5").firstV2Sequence(1001)).isEqualTo(501);
        assertThat(EventGeneratorTest.settings("--loadgen.schema.v2-from-fraction=0").firstV2Sequence(1000)).isZero();
    }

    private static TransactionEvent readAsV1(GenericRecord v2) throws Exception {
        GenericData data = new GenericData();
        data.addLogicalTypeConversion(new Conversions.DecimalConversion());
        data.addLogicalTypeConversion(new TimeConversions.TimestampMillisConversion());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(v2.getSchema(), data).write(v2, enc);
        enc.flush();
        SpecificDatumReader<TransactionEvent> reader = new SpecificDatumReader<>(v2.getSchema(), TransactionEvent.getClassSchema(),
                SpecificData.getForSchema(TransactionEvent.getClassSchema()));
        return reader.read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
    }
}
