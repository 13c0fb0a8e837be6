package io.tally.loadgen.replay;

import io.tally.loadgen.OutgoingRecord;
import io.tally.loadgen.RecordKind;
import io.tally.schemas.avro.TransactionEvent;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.NoSuchElementException;
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
 * <p>Reads lazily, one record at a time, on the thread that iterates (the pacer's). Not thread-safe;
 * {@link #close()} releases the file. Read errors surface as {@link UncheckedIOException}.
 */
public final class ReplaySource implements Iterator<OutgoingRecord>, AutoCloseable {
    private final DataFileStream<TransactionEvent> stream;
    private final double speed;
    private long firstEventMillis = Long.MIN_VALUE;
    private long highWaterMillis = Long.MIN_VALUE;
    private long sequence;

    public ReplaySource(Path file, double speed) throws IOException {
        InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
        this.stream = new DataFileStream<>(in, new SpecificDatumReader<>(TransactionEvent.class));
        this.speed = speed;
    }

    /** How many records the file holds, counted from its block headers without decoding the records. */
    public static long count(Path file) throws IOException {
        try (DataFileStream<TransactionEvent> s = new DataFileStream<>(new BufferedInputStream(Files.newInputStream(file), 1 << 16),
                new SpecificDatumReader<>(TransactionEvent.class))) {
            long n = 0;
            while (s.hasNext()) {
                n += s.getBlockCount();
                s.nextBlock();
            }
            return n;
        }
    }

    @Override
    public boolean hasNext() {
        return stream.hasNext();
    }

    @Override
    public OutgoingRecord next() {
        if (!hasNext()) throw new NoSuchElementException();
        TransactionEvent e = stream.next();
        long t = e.getEventTime().toEpochMilli();
        if (firstEventMillis == Long.MIN_VALUE) firstEventMillis = t;
        highWaterMillis = Math.max(highWaterMillis, t);
        long due = speed == 0 ? 0 : (long) ((highWaterMillis - firstEventMillis) * 1e6 / speed);
        return new OutgoingRecord(sequence++, RecordKind.REPLAYED, e.getCustomerId(), e, null, due, null);
    }

    @Override
    public void close() throws IOException {
        stream.close();
    }
}
