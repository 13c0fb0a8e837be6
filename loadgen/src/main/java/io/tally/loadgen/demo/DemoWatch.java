package io.tally.loadgen.demo;

import io.tally.loadgen.truth.GroundTruthFile;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Steps 4 and 5 of {@code ./tally demo}: while loadgen runs and until the pipeline has drained, one
 * progress line a second from ingest-app's metrics endpoint (events produced and ingested, bucket
 * updates, documents written, lag, RU/s, 429s), then the summary of the run beside loadgen's ground
 * truth. local/demo.sh starts loadgen, saves one scrape of the endpoint taken just before as the
 * baseline, and runs this from the loadgen jar.
 *
 * <pre>
 * java -cp loadgen.jar io.tally.loadgen.demo.DemoWatch --metrics-url=URL --baseline=FILE --loadgen-pid=PID
 *     --loadgen-log=FILE --truth=FILE [--app-pids=PID,...] [--width=COLUMNS] [--drain-timeout-s=180]
 *     [--elapsed-s=N] [--root=DIR] [--source-topics=transactions,orders]
 * </pre>
 *
 * {@code --source-topics} names every topic the aggregation reads events from (default {@code transactions}): the
 * ingested count, the input lag and the drain check cover all of them.
 *
 * The live line goes to stderr: redrawn in place when {@code --width} gives the terminal's columns, one
 * plain line a second when it is 0. The summary goes to stdout. Exit code 0 once the summary is printed
 * (also when the pipeline did not drain in time: a warning says so), 2 for bad arguments, 3 when loadgen
 * ended without acknowledging every record, 4 when one of {@code --app-pids} exited.
 */
public final class DemoWatch {
    static final int DONE = 0, USAGE_ERROR = 2, LOADGEN_FAILED = 3, APP_EXITED = 4;
    private static final String USAGE = "usage: DemoWatch --metrics-url=URL --baseline=FILE --loadgen-pid=PID --loadgen-log=FILE "
            + "--truth=FILE [--app-pids=PID,...] [--width=COLUMNS] [--drain-timeout-s=S] [--elapsed-s=S] [--root=DIR] "
            + "[--source-topics=TOPIC,...]";
    private static final List<String> KEYS = List.of("--metrics-url", "--baseline", "--loadgen-pid", "--loadgen-log", "--truth",
            "--app-pids", "--width", "--drain-timeout-s", "--elapsed-s", "--root", "--source-topics");
    /** loadgen's progress log line: "sent 1,234  acked 1,200/3,000 (40%)  ..." */
    private static final Pattern ACKED = Pattern.compile("acked ([0-9,]+)/([0-9,]+)");
    private static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(2);

    /**
     * @param width         the terminal's columns; 0 when stderr is not a terminal
     * @param elapsedBefore seconds the demo had run when this started, for the summary's total
     * @param root          paths under it are shown relative to it
     * @param sourceTopics  the topics the aggregation reads loadgen's events from
     */
    record Options(URI metricsUrl, Path baseline, long loadgenPid, Path loadgenLog, Path truth, List<Long> appPids,
                   int width, Duration drainTimeout, long elapsedBefore, Optional<Path> root, Set<String> sourceTopics) {
        static Options parse(String[] args) {
            Map<String, String> given = DemoArgs.parse(args, KEYS);
            for (String required : KEYS.subList(0, 5)) {
                if (given.get(required) == null || given.get(required).isEmpty()) throw new IllegalArgumentException(required + " is required");
            }
            List<Long> apps = new ArrayList<>();
            for (String pid : given.getOrDefault("--app-pids", "").split("[,\\s]+")) {
                if (!pid.isEmpty()) apps.add(number("--app-pids", pid));
            }
            return new Options(URI.create(given.get("--metrics-url")), Path.of(given.get("--baseline")),
                    number("--loadgen-pid", given.get("--loadgen-pid")), Path.of(given.get("--loadgen-log")),
                    Path.of(given.get("--truth")), List.copyOf(apps), (int) number("--width", given.getOrDefault("--width", "0")),
                    Duration.ofSeconds(number("--drain-timeout-s", given.getOrDefault("--drain-timeout-s", "180"))),
                    number("--elapsed-s", given.getOrDefault("--elapsed-s", "0")),
                    Optional.ofNullable(given.get("--root")).filter(r -> !r.isEmpty()).map(Path::of), sourceTopics(given.get("--source-topics")));
        }

        private static Set<String> sourceTopics(String given) {
            if (given == null || given.isBlank()) return PipelineMetrics.DEFAULT_SOURCES;
            return java.util.Arrays.stream(given.split("[,\\s]+")).filter(t -> !t.isEmpty()).collect(java.util.stream.Collectors.toUnmodifiableSet());
        }

        private static long number(String key, String value) {
            try {
                long n = Long.parseLong(value.strip());
                if (n < 0) throw new NumberFormatException();
                return n;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(key + " must be a whole number, got '" + value + "'");
            }
        }
    }

    /** Records loadgen has had acknowledged so far, of those it plans. */
    record Acked(long acked, long planned) {
        static final Acked NONE = new Acked(0, 0);

        /** The last count in loadgen's progress log, if it has written one yet. */
        static Optional<Acked> latest(String log) {
            Matcher m = ACKED.matcher(log);
            Acked last = null;
            while (m.find()) {
                last = new Acked(Long.parseLong(m.group(1).replace(",", "")), Long.parseLong(m.group(2).replace(",", "")));
            }
            return Optional.ofNullable(last);
        }
    }

    private final Options options;
    private final PrintStream out;
    private final PrintStream err;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(SCRAPE_TIMEOUT).build();
    private final long startNanos = System.nanoTime();
    private boolean linePending;

    DemoWatch(Options options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) throws InterruptedException {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("demo watch: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(USAGE_ERROR);
            return;
        }
        System.exit(new DemoWatch(options, System.out, System.err).run());
    }

    int run() throws InterruptedException {
        PipelineMetrics base = baseline();
        Acked acked = Acked.NONE;
        DrainCheck drain = new DrainCheck();
        long lastNanos = System.nanoTime(), lastRu = 0, peakRuPerSecond = 0;
        Long loadgenSeconds = null;
        OptionalLong drainedSeconds = OptionalLong.empty();
        GroundTruthFile.Figures truth = null;
        Progress progress = Progress.of(base, base, 0);
        while (true) {
            Thread.sleep(1000);
            for (long pid : options.appPids()) {
                if (!alive(pid)) {
                    endLine();
                    return APP_EXITED;
                }
            }
            if (loadgenSeconds == null) {
                acked = readAcked().orElse(acked);
                if (!alive(options.loadgenPid())) {
                    loadgenSeconds = seconds();
                    Optional<GroundTruthFile.Figures> figures = loadgenResult();
                    if (figures.isEmpty()) return LOADGEN_FAILED;
                    truth = figures.get();
                    acked = new Acked(truth.acknowledged(), truth.acknowledged());
                }
            }
            Optional<PipelineMetrics> now = scrape();
            if (now.isEmpty()) continue;
            progress = Progress.of(now.get(), base, acked.acked());
            long nanos = System.nanoTime();
            long ruPerSecond = (progress.ru() - lastRu) * 1_000_000_000L / Math.max(nanos - lastNanos, 1);
            lastNanos = nanos;
            lastRu = progress.ru();
            peakRuPerSecond = Math.max(peakRuPerSecond, ruPerSecond);
            line(ProgressLine.format(seconds(), acked.acked(), acked.planned(), progress, ruPerSecond, options.width()));
            if (loadgenSeconds == null) continue;
            if (drain.drained(progress, acked.acked())) {
                drainedSeconds = OptionalLong.of(seconds() - loadgenSeconds);
                break;
            }
            if (seconds() - loadgenSeconds > options.drainTimeout().toSeconds()) {
                endLine();
                err.println("warning: the pipeline did not drain within " + options.drainTimeout().toSeconds()
                        + "s after loadgen ended; the summary shows where it stands");
                break;
            }
        }
        endLine();
        new DemoSummary(options.elapsedBefore() + seconds(), loadgenSeconds, drainedSeconds, progress, peakRuPerSecond, truth,
                shown(options.truth())).print(out);
        return DONE;
    }

    /** The scrape demo.sh saved before loadgen started; none (an empty file) counts every counter from 0. */
    private PipelineMetrics baseline() {
        try {
            return PipelineMetrics.of(PrometheusText.parse(Files.readString(options.baseline())), options.sourceTopics());
        } catch (IOException | IllegalArgumentException e) {
            err.println("demo watch: no baseline in " + options.baseline() + " (" + e.getMessage() + "); counting from 0");
            return PipelineMetrics.NONE;
        }
    }

    /** A scrape of ingest-app's metrics; empty when the endpoint did not answer with samples this time. */
    private Optional<PipelineMetrics> scrape() throws InterruptedException {
        try {
            HttpRequest request = HttpRequest.newBuilder(options.metricsUrl()).timeout(SCRAPE_TIMEOUT).GET().build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) return Optional.empty();
            List<PrometheusText.Sample> samples = PrometheusText.parse(response.body());
            return samples.isEmpty() ? Optional.empty() : Optional.of(PipelineMetrics.of(samples, options.sourceTopics()));
        } catch (IOException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private Optional<Acked> readAcked() {
        try {
            return Acked.latest(Files.readString(options.loadgenLog()));
        } catch (IOException e) {
            return Optional.empty(); // not written yet
        }
    }

    /**
     * loadgen has exited: its ground truth says whether it had every record acknowledged. It writes the
     * file last (demo.sh removes the previous one), so a missing file means it failed before.
     */
    private Optional<GroundTruthFile.Figures> loadgenResult() {
        try {
            GroundTruthFile.Figures figures = GroundTruthFile.read(options.truth()).figures();
            if (figures.complete()) return Optional.of(figures);
            endLine();
            err.println("demo watch: loadgen did not have every record acknowledged (ground truth " + options.truth() + ")");
        } catch (IOException e) {
            endLine();
            err.println("demo watch: loadgen ended without a ground truth (" + e.getMessage() + ")");
        }
        return Optional.empty();
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private long seconds() {
        return (System.nanoTime() - startNanos) / 1_000_000_000L;
    }

    private void line(String line) {
        if (options.width() > 0) {
            err.print("\r\033[K" + line);
            linePending = true;
        } else {
            err.println(line);
        }
        err.flush();
    }

    private void endLine() {
        if (linePending) err.println();
        linePending = false;
        err.flush();
    }

    private String shown(Path file) {
        Path absolute = file.toAbsolutePath().normalize();
        return options.root().map(r -> r.toAbsolutePath().normalize()).filter(absolute::startsWith)
                .map(r -> r.relativize(absolute).toString()).orElse(file.toString());
    }
}
