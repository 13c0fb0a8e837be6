package io.tally.loadgen.replay;

import io.tally.loadgen.Destination;
import io.tally.loadgen.OrderEvents;
import io.tally.loadgen.OutgoingRecord;
import io.tally.loadgen.RecordKind;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.avro.orders.OrderEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.apache.avro.Schema;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.specific.SpecificDatumWriter;

/**
 * Records a stream as it is sent into an Avro container file, for a later replay. Every record that
 * carries an event is written (duplicates, late, future and invalid ones too, so a replay exercises the
 * same paths); MALFORMED records are not, as their bytes are not an event, and are counted in
 * {@link #skipped()}.
 *
 * <p>A stream without orders is a file of TransactionEvents, as it always was. A stream with orders is a
 * file of the union {@code [TransactionEvent, OrderEvent]} ({@link #WITH_ORDERS}): each order is kept as
 * the OrderEvent it was sent as, so {@link ReplaySource} knows from each record which topic it goes to.
 *
 * <p>Used as a pass-through step on the pacer thread, in send order. Not thread-safe. An I/O error ends
 * the run ({@link UncheckedIOException}): a recording with holes would replay a different stream.
 */
public final class StreamRecorder implements UnaryOperator<OutgoingRecord>, AutoCloseable {
    /** The schema of a recording that holds orders; readers of it also read TransactionEvent-only files. */
    public static final Schema WITH_ORDERS = Schema.createUnion(TransactionEvent.getClassSchema(), OrderEvent.getClassSchema());

    private final DataFileWriter<Object> writer;
    private final boolean withOrders;
    private long written;
    private long skipped;

    /** A recorder of TransactionEvents only. */
    public StreamRecorder(Path file) throws IOException {
        this(file, false);
    }

    /** @param withOrders whether the stream may hold {@link Destination#ORDERS} records */
    public StreamRecorder(Path file, boolean withOrders) throws IOException {
        if (file.toAbsolutePath().getParent() != null) Files.createDirectories(file.toAbsolutePath().getParent());
        Schema schema = withOrders ? WITH_ORDERS : TransactionEvent.getClassSchema();
        // The specific writer applies each generated class's own decimal and timestamp conversions.
        this.writer = new DataFileWriter<>(new SpecificDatumWriter<>(schema));
        this.withOrders = withOrders;
        writer.setCodec(CodecFactory.deflateCodec(1)); // ~4x smaller at little CPU; replay files get large
        writer.create(schema, file.toFile());
    }

    @Override
    public OutgoingRecord apply(OutgoingRecord r) {
        if (r.kind() == RecordKind.MALFORMED || r.event() == null) {
            skipped++;
            return r;
        }
        boolean order = r.destination() == Destination.ORDERS;
        if (order && !withOrders) throw new IllegalStateException("record #" + r.sequence() + " is an order; this recorder was made without orders");
        try {
            writer.append(order ? OrderEvents.toOrder(r.event()) : r.event());
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
