package io.tally.ingest.replay;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The progress line of one phase (reading, writing): done / total, percent, rate and ETA, at most once
 * per interval. On a terminal it redraws one line with a bar ({@code \r}); otherwise it writes a plain
 * line per interval, which is what a log collector wants. The rate is the phase's average so far, which
 * gives a steadier ETA than the last interval's rate when the broker or Cosmos stutter.
 *
 * <p>Single-threaded: the job's thread calls it.
 */
final class ReplayProgress {
    private static final int BAR_WIDTH = 30;

    private final PrintStream out;
    private final boolean terminal;
    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private String phase;
    private long total;
    private long startNanos;
    private long lastPrintNanos;
    private boolean drawn;

    ReplayProgress(PrintStream out, boolean terminal, Duration interval, LongSupplier nanoTime) {
        this.out = out;
        this.terminal = terminal;
        this.intervalNanos = interval.toNanos();
        this.nanoTime = nanoTime;
    }

    static ReplayProgress stderr(Duration interval) {
        return new ReplayProgress(System.err, System.console() != null, interval, System::nanoTime);
    }

    void start(String phase, long total) {
        this.phase = phase;
        this.total = total;
        this.startNanos = nanoTime.getAsLong();
        this.lastPrintNanos = startNanos;
    }

    /** Prints when the interval has passed since the last line. */
    void update(long done) {
        long now = nanoTime.getAsLong();
        if (now - lastPrintNanos < intervalNanos) return;
        lastPrintNanos = now;
        print(line(done, now));
    }

    /** The phase's last line, always printed. */
    void finish(long done) {
        print(line(done, nanoTime.getAsLong()));
        if (terminal && drawn) out.println();
        drawn = false;
    }

    private void print(String line) {
        if (terminal) {
            out.print("\r" + line);
            drawn = true;
        } else {
            out.println(line);
        }
        out.flush();
    }

    String line(long done, long nowNanos) {
        double seconds = Math.max(1e-9, (nowNanos - startNanos) / 1e9);
        double rate = done / seconds;
        double fraction = total <= 0 ? 1.0 : Math.min(1.0, (double) done / total);
        String eta = done >= total ? "done" : rate <= 0 ? "ETA --:--:--" : "ETA " + hms((long) ((total - done) / rate));
        String text = String.format(Locale.ROOT, "replay %s: %,d / %,d (%5.1f%%) %,.0f/s %s, elapsed %s",
                phase, done, total, fraction * 100, rate, eta, hms((long) seconds));
        if (!terminal) return text;
        int filled = (int) Math.round(fraction * BAR_WIDTH);
        return "[" + "#".repeat(filled) + ".".repeat(BAR_WIDTH - filled) + "] " + text;
    }

    static String hms(long seconds) {
        return String.format(Locale.ROOT, "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60);
    }
}
