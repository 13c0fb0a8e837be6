package io.tally.loadgen;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Progress of a long run: sent, acknowledged, failed, rate over the last interval, and an ETA when the
 * total is known. When stderr is a terminal, one line is redrawn in place twice a second; otherwise
 * (CI, a log file) a log line every {@code interval}, so logs stay readable.
 *
 * <p>Runs on its own daemon thread; reads {@link SendCounters} only. {@link #close()} stops it and
 * clears the live line.
 */
final class ProgressReporter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProgressReporter.class);
    private static final Duration TERMINAL_REFRESH = Duration.ofMillis(500);

    private final SendCounters counters;
    private final long total;
    private final boolean terminal;
    private final PrintStream err;
    private final ScheduledExecutorService timer;
    private final long startNanos = System.nanoTime();
    private long lastAcked;
    private long lastNanos = startNanos;

    /** @param total records planned, or -1 when unknown */
    ProgressReporter(SendCounters counters, long total, Duration interval, PrintStream err) {
        this.counters = counters;
        this.total = total;
        this.err = err;
        this.terminal = stderrIsTerminal();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "loadgen-progress");
            t.setDaemon(true);
            return t;
        });
        long every = (terminal ? TERMINAL_REFRESH : interval).toMillis();
        if (every > 0) timer.scheduleAtFixedRate(this::report, every, every, TimeUnit.MILLISECONDS);
    }

    private void report() {
        long now = System.nanoTime();
        long acked = counters.acked();
        double rate = (acked - lastAcked) * 1e9 / Math.max(1, now - lastNanos);
        lastAcked = acked;
        lastNanos = now;
        String line = line(counters.sent(), acked, counters.failed(), rate, total, now - startNanos);
        if (terminal) {
            err.print("\r\033[K" + line);
            err.flush();
        } else {
            log.info(line);
        }
    }

    static String line(long sent, long acked, long failed, double rate, long total, long elapsedNanos) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "sent %,d  acked %,d", sent, acked));
        if (total >= 0) sb.append(String.format(Locale.ROOT, "/%,d (%.0f%%)", total, 100.0 * acked / Math.max(1, total)));
        if (failed > 0) sb.append(String.format(Locale.ROOT, "  FAILED %,d", failed));
        sb.append(String.format(Locale.ROOT, "  %,.0f rec/s", rate));
        if (total >= 0 && acked > 0 && acked < total) {
            double avg = acked * 1e9 / elapsedNanos;
            sb.append("  ETA ").append(Duration.ofSeconds((long) ((total - acked) / avg)).toString().substring(2).toLowerCase(Locale.ROOT));
        }
        return sb.toString();
    }

    /**
     * Java offers no isatty for stderr alone ({@code System.console()} looks at stdin and stdout). On Linux,
     * fd 2 is a terminal when it links to a tty device; elsewhere fall back to the console check.
     */
    static boolean stderrIsTerminal() {
        try {
            Path fd2 = Path.of("/proc/self/fd/2");
            if (Files.exists(fd2)) {
                String target = Files.readSymbolicLink(fd2).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            }
        } catch (Exception e) {
            // not Linux, or no permission: use the console check below
        }
        return System.console() != null;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        if (terminal) {
            err.print("\r\033[K");
            err.flush();
        }
    }
}
