package io.tally.benchmarks;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.testsupport.cosmos.CosmosControl;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One benchmark process's claim on the machine, begun once at the top of its {@code main}: holds the {@link BenchLock}
 * until the process ends, records the 1-minute load average before the run and samples it during the run, and, for
 * a benchmark that drives the local Cosmos endpoint, that endpoint's event-loop delay over the run. A run above one
 * runnable process per core is NOISY: its figures include waiting for the CPU. {@link BenchResults} writes these
 * figures into every result file ({@link #describe}); benchmarks that write their own page add {@link #markdown}.
 *
 * <p>The load average counts the benchmark's own processes too, so a benchmark that keeps both cores busy raises
 * the mean during its run by itself; the load before the run is the other users' share.
 */
public final class BenchRun {
    /** /proc/loadavg moves every 5 s; sampling faster only repeats values. */
    static final long SAMPLE_SECONDS = 5;
    private static final Path LOADAVG = Path.of("/proc/loadavg");

    private static BenchRun current;

    private final String name;
    private final BenchLock lock;
    private final int cores = Runtime.getRuntime().availableProcessors();
    private final double loadBefore;
    private final ScheduledExecutorService sampler;
    private double loadMax;
    private double loadSum;
    private long loadSamples;
    private CosmosControl cosmos;
    private CosmosControl.LoopDelay lastLoopDelay;

    private BenchRun(String name, BenchLock lock) {
        this.name = name;
        this.lock = lock;
        this.loadBefore = loadAverage();
        this.sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-load-sampler");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleAtFixedRate(this::sample, SAMPLE_SECONDS, SAMPLE_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * Takes the machine-wide benchmark lock (waiting, and saying so, while another benchmark runs) and starts
     * sampling the load. The lock is held until this process ends. A second call in the same process returns
     * the first run.
     */
    public static synchronized BenchRun begin(String name) {
        if (current != null) return current;
        String holder = String.format(Locale.ROOT, "%s (pid %d, since %s)", name, ProcessHandle.current().pid(),
                Instant.now().truncatedTo(ChronoUnit.SECONDS));
        try {
            BenchLock lock = BenchLock.acquire(BenchLock.defaultFile(), holder, System.err::println);
            current = new BenchRun(name, lock);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot take the benchmark lock " + BenchLock.defaultFile() + " (set "
                    + BenchLock.ENV + " to another file): " + e.getMessage(), e);
        }
        System.err.printf(Locale.ROOT, "[bench] %s: holding %s; load average %.2f on %d cores%s%n", name, current.lock.file(),
                current.loadBefore, current.cores, current.loadBefore > current.cores ? " (above one runnable process per core: NOISY)" : "");
        return current;
    }

    /** The run begun in this process, if any (unit tests that write results begin none). */
    public static synchronized Optional<BenchRun> current() {
        return Optional.ofNullable(current);
    }

    /**
     * Records the event-loop delay of this local Cosmos endpoint over the run, from now on: a figure taken while
     * the endpoint's single Node thread was late is the endpoint's limit, not the code under test.
     */
    public synchronized BenchRun cosmos(CosmosControl control) {
        control.resetLoopDelay();
        this.cosmos = control;
        this.lastLoopDelay = null;
        return this;
    }

    private void sample() {
        double load = loadAverage();
        CosmosControl c;
        synchronized (this) {
            loadMax = Math.max(loadMax, load);
            loadSum += load;
            loadSamples++;
            c = cosmos;
        }
        if (c != null) loopDelay(c);
    }

    /** Reads the endpoint's loop delay; remembers the last answer, for when the endpoint has stopped before the end. */
    private CosmosControl.LoopDelay loopDelay(CosmosControl c) {
        try {
            CosmosControl.LoopDelay d = c.loopDelay();
            synchronized (this) {
                lastLoopDelay = d;
            }
            return d;
        } catch (RuntimeException e) {
            synchronized (this) {
                return lastLoopDelay;
            }
        }
    }

    /** The figures so far. */
    public Machine machine() {
        sample();
        synchronized (this) {
            return new Machine(cores, loadBefore, loadMax, loadSum / loadSamples, loadSamples, lastLoopDelay);
        }
    }

    /**
     * @param loadBefore  1-minute load average when the lock was taken
     * @param loadMax     highest 1-minute load average sampled during the run
     * @param loadMean    mean of those samples
     * @param loopDelay   the local Cosmos endpoint's event-loop delay over the run, or null when it was not watched
     */
    public record Machine(int cores, double loadBefore, double loadMax, double loadMean, long loadSamples, CosmosControl.LoopDelay loopDelay) {
        /** Above one runnable process per core before or on average during the run. */
        public boolean noisy() {
            return isNoisy(cores, loadBefore, loadMean);
        }
    }

    static boolean isNoisy(int cores, double loadBefore, double loadMean) {
        return loadBefore > cores || loadMean > cores;
    }

    /** Adds the run's figures to a result file's {@code machine} object. */
    public void describe(ObjectNode machine) {
        Machine m = machine();
        machine.put("benchLock", lock.file().toString());
        machine.put("loadAverageBefore", round2(m.loadBefore()));
        machine.put("loadAverageMax", round2(m.loadMax()));
        machine.put("loadAverageMean", round2(m.loadMean()));
        machine.put("loadAverageSamples", m.loadSamples());
        machine.put("noisy", m.noisy());
        if (m.loopDelay() != null) {
            CosmosControl.LoopDelay d = m.loopDelay();
            machine.putObject("cosmosLoopDelay").put("p50Ms", d.p50Ms()).put("p99Ms", d.p99Ms()).put("maxMs", d.maxMs())
                    .put("meanMs", d.meanMs()).put("samples", d.samples()).put("requests", d.requests());
        }
    }

    /** The same figures as one Markdown paragraph, for benchmarks that write their own page. */
    public String markdown() {
        Machine m = machine();
        return machineLine(m.cores(), m.loadBefore(), m.loadMean(), m.loadMax(), m.loopDelay() == null ? null
                : loopDelayText(m.loopDelay().p50Ms(), m.loopDelay().p99Ms(), m.loopDelay().maxMs(), m.loopDelay().requests())) + "\n";
    }

    /** "Load average (1 min) 1.20 before the run, mean 2.50 / max 3.10 during it, on 2 cores[; NOISY: ...]". */
    static String machineLine(int cores, double before, double mean, double max, String loopDelay) {
        String line = String.format(Locale.ROOT, "Load average (1 min): %.2f before the run, mean %.2f / max %.2f during it, on %d cores",
                before, mean, max, cores);
        if (loopDelay != null) line += "; local Cosmos endpoint's event-loop delay " + loopDelay;
        if (isNoisy(cores, before, mean)) {
            line += ". **NOISY**: above one runnable process per core, so the figures include time spent waiting for a CPU";
        }
        return line + ".";
    }

    static String loopDelayText(double p50, double p99, double max, long requests) {
        return String.format(Locale.ROOT, "p50 %.1f ms, p99 %.1f ms, max %.0f ms over %,d requests", p50, p99, max, requests);
    }

    /** The 1-minute load average: /proc/loadavg where there is one, else what the JVM reports (-1 if nothing). */
    static double loadAverage() {
        try {
            if (Files.isReadable(LOADAVG)) return Double.parseDouble(Files.readString(LOADAVG).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            // fall through to the JVM's figure
        }
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }

    @Override
    public String toString() {
        return name;
    }
}
