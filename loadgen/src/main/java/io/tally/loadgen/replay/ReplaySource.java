package io.tally.loadgen.replay;

import io.tally.loadgen.Destination;
import io.tally.loadgen.OrderEvents;
import io.tally.loadgen.OutgoingRecord;
import io.tally.loadgen.RecordKind;
import io.tally.schemas.avro.TransactionEvent;
import io.tally.schemas.avro.orders.OrderEvent;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.avro.Schema;
import org.apache.avro.file.DataFileStream;
import org.apache.avro.specific.SpecificDatumReader;

/**
 * A recorded stream read back for republishing: events unchanged (event time preserved), in file order,
 * each due at the distance of the stream's event-time high-water mark from the first event, divided by
 * {@code speed} (1.0 = the original pacing, 2.0 = twice as fast; 0 = all due at once). The high-water
 * mark rather than the event's own time, because out-of-order events (late ones, or a generated stream
 * spread over a window) must not pause the replay or run it backwards: they go out at once, as they
 * arrived originally.
 *
 * <p>A recorded OrderEvent goes back to {@link Destination#ORDERS}, as the logical event it was made from
 * ({@link OrderEvents}), so it is encoded again to the same bytes; {@link #holdsOrders} tells beforehand
 * whether a file may hold any.
 *
 * <p>Reads lazily, one record at a time, on the thread that iterates (the pacer's). Not thread-safe;
 * {@link #close()} releases the file. Read errors surface as {@link UncheckedIOException}.
 */
public final class ReplaySource implements Iterator<OutgoingRecord>, AutoCloseable {
    private final DataFileStream<Object> stream;
    private final double speed;
    private long firstEventMillis = Long.MIN_VALUE;
    private long highWaterMillis = Long.MIN_VALUE;
    private long sequence;

    public ReplaySource(Path file, double speed) throws IOException {
        this.stream = open(file);
        this.speed = speed;
    }

    /** How many records the file holds, counted from its block headers without decoding the records. */
    public static long count(Path file) throws IOException {
        try (DataFileStream<Object> s = open(file)) {
            long n = 0;
            while (s.hasNext()) {
                n += s.getBlockCount();
                s.nextBlock();
            }
            return n;
        }
    }

    /** Whether the file was recorded from a stream with orders (its schema can carry an OrderEvent). */
    public static boolean holdsOrders(Path file) throws IOException {
        try (DataFileStream<Object> s = open(file)) {
            Schema schema = s.getSchema();
            String order = OrderEvent.getClassSchema().getFullName();
            return schema.getType() == Schema.Type.UNION && schema.getTypes().stream().anyMatch(t -> t.getFullName().equals(order));
        }
    }

    /** Reads files of TransactionEvents and of the union with OrderEvent alike: Avro resolves the first into the second. */
    private static DataFileStream<Object> open(Path file) throws IOException {
        return new DataFileStream<>(new BufferedInputStream(Files.newInputStream(file), 1 << 16),
                new SpecificDatumReader<>(StreamRecorder.WITH_ORDERS));
    }

    @Override
    public boolean hasNext() {
        return stream.hasNext();
    }

    @Override
    public OutgoingRecord next() {
        if (!hasNext()) throw new NoSuchElementException();
        Object datum = stream.next();
        boolean order = datum instanceof OrderEvent;
        TransactionEvent e = order ? OrderEvents.toTransaction((OrderEvent) datum) : (TransactionEvent) datum;
        long t = e.getEventTime().toEpochMilli();
        if (firstEventMillis == Long.MIN_VALUE) firstEventMillis = t;
        highWaterMillis = Math.max(highWaterMillis, t);
        long due = speed == 0 ? 0 : (long) ((highWaterMillis - firstEventMillis) * 1e6 / speed);
        return new OutgoingRecord(sequence++, RecordKind.REPLAYED, order ? Destination.ORDERS : Destination.TRANSACTIONS,
                e.getCustomerId(), e, null, due, null);
    }

    @Override
    public void close() throws IOException {
        stream.close();
    }
}
