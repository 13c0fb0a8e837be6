package io.tally.testsupport.pipeline;

import io.tally.testsupport.process.ChildJvm;
import io.tally.testsupport.process.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One ingest-app instance of a {@link Pipeline}, in its own JVM: the same arguments, state directory and
 * log file across restarts, as a supervised process on one machine would have. Each start gets fresh
 * ports for its sink metrics ({@code /metrics}) and its consumer counters ({@code /consumed}); counters
 * start from zero with each process.
 */
public final class IngestNode implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    public final String name;
    final String role;
    private final List<String> args;
    private final Path log;
    private ChildJvm jvm;
    private int metricsPort;
    private int observePort;
    private int starts;

    IngestNode(String name, String role, List<String> args, Path log) {
        this.name = name;
        this.role = role;
        this.args = List.copyOf(args);
        this.log = log;
    }

    public synchronized IngestNode start() {
        if (jvm != null && jvm.isAlive()) throw new IllegalStateException(name + " is running");
        metricsPort = Ports.free();
        observePort = Ports.free();
        List<String> all = new ArrayList<>(args);
        all.add("--sink.metrics.port=" + metricsPort);
        // The heap ./tally gives ingest-app (TALLY_APP_HEAP): one JVM runs the Streams app and the sink here.
        jvm = ChildJvm.start(ObservedIngestMain.class.getName(), List.of("-Xmx1g", "-Dtally.observe.port=" + observePort), all, Map.of(), log);
        starts++;
        return this;
    }

    /** SIGKILL: no commit, no flush, no close. */
    public synchronized void kill() {
        jvm.kill();
    }

    /** SIGTERM and a clean shutdown. */
    public synchronized void stop() {
        if (jvm != null && jvm.isAlive()) jvm.stop(Duration.ofSeconds(40));
    }

    public synchronized boolean isAlive() {
        return jvm != null && jvm.isAlive();
    }

    public synchronized int starts() {
        return starts;
    }

    public String logTail() {
        return io.tally.testsupport.process.Processes.tail(log);
    }

    /** An answer of {@code /health/ready}: status (-1 when nothing answers) and body. */
    public record Readiness(int status, String body) {}

    /** What the instance says about its readiness (any role: the endpoint serves aggregate-only instances too). */
    public Readiness readiness() {
        if (!isAlive()) return new Readiness(-1, "");
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/health/ready"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return new Readiness(r.statusCode(), r.body());
        } catch (IOException e) {
            return new Readiness(-1, "");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Readiness(-1, "");
        }
    }

    /** Prometheus samples of the instance ({@code name{labels}} -> value); empty when not answering. */
    public Map<String, Double> metrics() {
        return parse(get(metricsPort, "/metrics"));
    }

    /** A sink metric summed over its labels, e.g. {@code tally_sink_updates_consumed_total}; 0 when absent. */
    public double metric(String name) {
        return metric(name, "");
    }

    /** A sink metric summed over the samples whose labels contain {@code label}, e.g. {@code outcome="stale"}. */
    public double metric(String name, String label) {
        return metrics().entrySet().stream()
                .filter(e -> e.getKey().equals(name) || e.getKey().startsWith(name + "{"))
                .filter(e -> e.getKey().contains(label))
                .mapToDouble(Map.Entry::getValue).sum();
    }

    /**
     * The heap this process still holds after a full collection ({@code jcmd <pid> GC.run}, then the heap in use as
     * its metrics report it): what it keeps reachable, not the garbage a collector has not reached yet. -1 when the
     * process is not running.
     */
    public long liveHeapBytes() throws IOException, InterruptedException {
        if (!isAlive()) return -1;
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process gc = new ProcessBuilder(jcmd.toString(), Long.toString(jvm.pid()), "GC.run").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!gc.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
            gc.destroyForcibly();
            throw new IOException("jcmd GC.run did not finish within 30 s for " + name);
        }
        return (long) metric("jvm_memory_used_bytes", "area=\"heap\"");
    }

    /** Records this process's consumers have fetched, per topic (Kafka's '.'→'_' topic tag); empty when not answering. */
    public Map<String, Double> consumed() {
        return parse(get(observePort, "/consumed"));
    }

    /** Records of {@code topic} this process has consumed so far; 0 before its consumers fetched any. */
    public double consumed(String topic) {
        return consumed().getOrDefault(topic.replace('.', '_'), 0.0);
    }

    private String get(int port, String path) {
        if (!isAlive()) return "";
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : "";
        } catch (IOException e) {
            return ""; // still starting, or just killed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private static Map<String, Double> parse(String body) {
        Map<String, Double> out = new TreeMap<>();
        body.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).forEach(l -> {
            int space = l.lastIndexOf(' ');
            String key = l.substring(0, space);
            try {
                out.merge(key, Double.parseDouble(l.substring(space + 1)), Double::sum);
            } catch (NumberFormatException e) {
                // NaN-like samples carry nothing a test counts
            }
        });
        return out;
    }

    @Override
    public void close() {
        if (isAlive()) kill();
    }
}
