package io.tally.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The figures and time series of one benchmark run, written as {@code docs/benchmarks/data/NAME.json},
 * from which {@code docs/benchmarks.md} and its plots are rendered. One file per benchmark, replaced by
 * each run, so the report always shows the newest run of every benchmark next to the command that made it.
 * The load figures of the {@link BenchRun} begun in this process (and the local Cosmos endpoint's event-loop
 * delay when it was watched) go into {@code machine}.
 *
 * <pre>{
 *   "name": "sink-latency", "title": "...", "command": "./tally bench sink-latency",
 *   "machine": {"cores": 2, "memoryGiB": 23.4, "os": "...", "java": "...", "loadAverageStart": 1.2, "loadAverageEnd": 3.4,
 *               "benchLock": "/tmp/tally-bench.lock", "loadAverageBefore": 1.2, "loadAverageMax": 3.9, "loadAverageMean": 2.7,
 *               "loadAverageSamples": 60, "noisy": true,
 *               "cosmosLoopDelay": {"p50Ms": 0.4, "p99Ms": 12.0, "maxMs": 80.0, "meanMs": 1.1, "samples": 600, "requests": 90000}},
 *   "ranAt": "2026-11-21T23:30:00Z", "notes": ["..."],
 *   "figures": [{"scenario": "10 ms", "metric": "throughput", "value": 1234.5, "unit": "docs/s"}],
 *   "series": [{"chart": "throughput over time", "name": "10 ms", "unit": "docs/s", "points": [[0.0, 12.0], [1.0, 15.0]]}],
 *   "axes": {"cost by freshness target": {"title": "freshness target (s)", "log": true, "points": true}}
 * }</pre>
 */
public final class BenchResults {
    public static final Path DATA_DIR = Path.of("docs", "benchmarks", "data");
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final ObjectNode root = JSON.createObjectNode();
    private final ArrayNode figures;
    private final ArrayNode notes;
    private final Map<String, ArrayNode> series = new LinkedHashMap<>();
    private final ArrayNode seriesArray;
    private final ObjectNode axes;

    /**
     * @param name    file name (without .json) and key of the benchmark, e.g. {@code sink-latency}
     * @param title   heading in the report
     * @param command the command that reproduces the run
     */
    public BenchResults(String name, String title, String command) {
        root.put("name", name);
        root.put("title", title);
        root.put("command", command);
        root.put("ranAt", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        ObjectNode machine = root.putObject("machine");
        machine.put("cores", Runtime.getRuntime().availableProcessors());
        machine.put("memoryGiB", Math.round(totalMemoryBytes() / (1024.0 * 1024 * 1024) * 10) / 10.0);
        machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        machine.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        machine.put("loadAverageStart", loadAverage());
        notes = root.putArray("notes");
        figures = root.putArray("figures");
        seriesArray = root.putArray("series");
        axes = root.putObject("axes");
    }

    /**
     * The x axis of {@code chart} when it is not time: its title, logarithmic or not; its points are drawn
     * as markers (a curve measured at a few settings, not a time series).
     */
    public synchronized BenchResults xAxis(String chart, String title, boolean logarithmic) {
        axes.putObject(chart).put("title", title).put("log", logarithmic).put("points", true);
        return this;
    }

    /** A single figure of a scenario, e.g. ("10 ms", "throughput", 1234.5, "docs/s"). */
    public BenchResults figure(String scenario, String metric, double value, String unit) {
        ObjectNode f = figures.addObject();
        f.put("scenario", scenario);
        f.put("metric", metric);
        f.put("value", value);
        f.put("unit", unit);
        return this;
    }

    /** A line of text shown under the benchmark's table (what was measured, caveats). */
    public BenchResults note(String text) {
        notes.add(text);
        return this;
    }

    /** Adds a point to the series {@code name} of the plot {@code chart}; t is seconds since the scenario began. */
    public synchronized BenchResults point(String chart, String name, String unit, double t, double value) {
        ArrayNode points = series.computeIfAbsent(chart + "\u0000" + name, k -> {
            ObjectNode s = seriesArray.addObject();
            s.put("chart", chart);
            s.put("name", name);
            s.put("unit", unit);
            return s.putArray("points");
        });
        points.addArray().add(t).add(value);
        return this;
    }

    /** Writes docs/benchmarks/data/NAME.json (relative to the working directory, the project root under ./tally). */
    public Path write() {
        return write(DATA_DIR);
    }

    public synchronized Path write(Path dir) {
        ObjectNode machine = (ObjectNode) root.get("machine");
        machine.put("loadAverageEnd", loadAverage());
        BenchRun.current().ifPresent(run -> run.describe(machine));
        try {
            Files.createDirectories(dir);
            Path file = dir.resolve(root.get("name").asText() + ".json");
            JSON.writeValue(file.toFile(), root);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static double loadAverage() {
        return Math.round(BenchRun.loadAverage() * 100) / 100.0;
    }

    private static long totalMemoryBytes() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return Runtime.getRuntime().maxMemory();
    }
}
