package io.tally.schemas.serde;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WireFormatTest {

    @Test
    void headerIsMagicZeroThenBigEndianId() {
        assertThat(WireFormat.header(0x01020304)).containsExactly(0, 1, 2, 3, 4);
        assertThat(WireFormat.header(1)).containsExactly(0, 0, 0, 0, 1);
    }

    @Test
    void readsBackTheIdItWrote() {
        for (int id : new int[] {0, 1, 255, 256, 65_536, Integer.MAX_VALUE}) {
            assertThat(WireFormat.schemaId(WireFormat.header(id), "t")).isEqualTo(id);
        }
    }

    @Test
    void aHeaderWithoutBodyIsStillReadable() {
        // An empty Avro body is valid for a record with no fields; the header alone must parse.
        assertThat(WireFormat.schemaId(new byte[] {0, 0, 0, 0, 9}, "t")).isEqualTo(9);
    }

    @Test
    void rejectsPayloadsShorterThanTheHeader() {
        for (byte[] payload : new byte[][] {{}, {0}, {0, 0, 0, 1}}) {
            assertThatThrownBy(() -> WireFormat.schemaId(payload, "transactions"))
                    .isInstanceOfSatisfying(AvroDecodeException.class, e -> {
                        assertThat(e.problem()).isEqualTo(AvroDecodeException.Problem.TOO_SHORT);
                        assertThat(e.isBadInput()).isTrue();
                        assertThat(e.topic()).isEqualTo("transactions");
                        assertThat(e.schemaId()).isEqualTo(-1);
                    })
                    .hasMessageContaining("transactions")
                    .hasMessageContaining(payload.length + " bytes");
        }
    }

    @Test
    void rejectsAWrongMagicByteAndRecognisesJson() {
        byte[] json = "{\"amount\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThatThrownBy(() -> WireFormat.schemaId(json, "transactions"))
                .isInstanceOfSatisfying(AvroDecodeException.class,
                        e -> assertThat(e.problem()).isEqualTo(AvroDecodeException.Problem.BAD_MAGIC_BYTE))
                .hasMessageContaining("0x7b")
                .hasMessageContaining("looks like JSON");
        assertThatThrownBy(() -> WireFormat.schemaId(new byte[] {1, 0, 0, 0, 1, 2}, "t"))
                .hasMessageContaining("0x01")
                .hasMessageNotContaining("JSON");
    }

    @Test
    void coordinatesAreAddedWithoutLosingTheProblem() {
        AvroDecodeException e = new AvroDecodeException(AvroDecodeException.Problem.UNKNOWN_SCHEMA_ID, "transactions", 42,
                "no such id", null).withCoordinates(3, 1234L);
        assertThat(e.partition()).hasValue(3);
        assertThat(e.offset()).hasValue(1234L);
        assertThat(e.schemaId()).isEqualTo(42);
        assertThat(e.detail()).isEqualTo("no such id");
        assertThat(e.getMessage()).startsWith("Cannot decode Avro record on transactions-3@1234 (writer schema id 42)");
    }
}
