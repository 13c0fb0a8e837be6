package io.tally.loadgen.replay;

import io.tally.loadgen.OutgoingRecord;
import io.tally.loadgen.RecordKind;
import io.tally.schemas.avro.TransactionEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.specific.SpecificDatumWriter;

/**
 * Records a stream as it is sent into an Avro container file of TransactionEvents, for a later replay.
 * Every record that carries an event is written (duplicates, late, future and invalid ones too, so a
 * replay exercises the same paths); MALFORMED records are not, as their bytes are not a
 * TransactionEvent, and are counted in {@link #skipped()}.
 *
 * <p>Used as a pass-through step on the pacer thread, in send order. Not thread-safe. An I/O error ends
 * the run ({@link UncheckedIOException}): a recording with holes would replay a different stream.
 */
public final class StreamRecorder implements UnaryOperator<OutgoingRecord>, AutoCloseable {
    private final DataFileWriter<TransactionEvent> writer;
    private long written;
    private long skipped;

    public StreamRecorder(Path file) throws IOException {
        if (file.toAbsolutePath().getParent() != null) Files.createDirectories(file.toAbsolutePath().getParent());
        // SpecificDatumWriter(Class) picks up the generated class's decimal and timestamp conversions.
        this.writer = new DataFileWriter<>(new SpecificDatumWriter<>(TransactionEvent.class));
        writer.setCodec(CodecFactory.deflateCodec(1)); // ~4x smaller at little CPU; replay files get large
        writer.create(TransactionEvent.getClassSchema(), file.toFile());
    }

    @Override
    public OutgoingRecord apply(OutgoingRecord r) {
        if (r.kind() == RecordKind.MALFORMED || r.event() == null) {
            skipped++;
            return r;
        }
        try {
            writer.append(r.event());
            written++;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record event #" + r.sequence(), e);
        }
        return r;
    }

    public long written() { return written; }

    public long skipped() { return skipped; }

    @Override
    public void close() throws IOException {
        writer.close();
    }
}
