package io.tally.benchmarks;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;

/**
 * The machine-wide lock every benchmark holds for its whole run, so that two benchmarks never measure each other.
 * A lock on a file ({@link FileChannel#lock}): the operating system drops it when the process ends, however it ends,
 * so a killed benchmark never leaves it behind. The holder writes who it is into the file for the next one to show
 * while it waits.
 *
 * <p>The file is {@code $TALLY_BENCH_LOCK}, else {@code tally-bench.lock} in the system temp directory, the same
 * file {@code ./tally bench} locks with flock(1) around its whole set. On Linux flock(1) and this lock (fcntl) do
 * not see each other, so a benchmark started by {@code ./tally bench} does not wait for its own launcher, while any
 * two benchmark JVMs still exclude each other.
 */
public final class BenchLock implements AutoCloseable {
    public static final String ENV = "TALLY_BENCH_LOCK";

    private final FileChannel channel;
    private final FileLock lock;
    private final Path file;

    private BenchLock(FileChannel channel, FileLock lock, Path file) {
        this.channel = channel;
        this.lock = lock;
        this.file = file;
    }

    public static Path defaultFile() {
        String env = System.getenv(ENV);
        return env != null && !env.isBlank() ? Path.of(env) : Path.of(System.getProperty("java.io.tmpdir"), "tally-bench.lock");
    }

    /**
     * Takes the lock, waiting as long as another benchmark holds it; {@code say} hears which lock it waits for, who
     * holds it, and when it got it. {@code holder} is written into the file (name, pid, start) for the next waiter.
     */
    public static BenchLock acquire(Path file, String holder, Consumer<String> say) throws IOException {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                long t0 = System.nanoTime();
                say.accept("[bench] waiting for the benchmark lock " + file + ", held by " + holderOf(channel)
                        + " (benchmarks never run at the same time) ...");
                lock = channel.lock();
                say.accept(String.format("[bench] got the benchmark lock %s after %.0f s", file, (System.nanoTime() - t0) / 1e9));
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((holder + "\n").getBytes(StandardCharsets.UTF_8)), 0);
            return new BenchLock(channel, lock, file);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    public Path file() {
        return file;
    }

    private static String holderOf(FileChannel channel) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(512);
        int n = channel.read(buf, 0);
        String text = n <= 0 ? "" : new String(buf.array(), 0, n, StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? "another process" : text;
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}
