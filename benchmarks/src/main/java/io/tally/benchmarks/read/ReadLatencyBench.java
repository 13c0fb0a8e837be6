package io.tally.benchmarks.read;

import com.azure.cosmos.CosmosAsyncClient;
import io.tally.benchmarks.BenchResults;
import io.tally.benchmarks.BenchRun;
import io.tally.model.TimeUnit;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
import io.tally.testsupport.cosmos.CosmosControl;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * read-service under added Cosmos latency (not part of the test suite): open loop ({@link OpenLoop}) at a fixed rate
 * (default 3,000 req/s), point reads and 72-bucket in-partition range queries through the HTTP API, with 0, 2 and 10 ms
 * added to every Cosmos request by the local endpoint ({@code PUT /latency}). Per delay and workload: avg, p50, p99,
 * p99.9, max, errors by status (503 = shed by {@code read.max-in-flight-requests}), the generator's and the service's
 * most requests in flight, p99 of the first and the last third of the run (queueing grows, a healthy service does not),
 * and the service's threads before and after (event loops and SDK threads must not multiply or be exhausted).
 *
 * <p>Writes {@code docs/benchmarks/data/read-latency.json} and {@code docs/benchmarks/read-latency.md}. Args (optional):
 * rates (comma separated, 3000,100: the target rate, and one this shared machine sustains), seconds per phase (15), delays in ms (comma separated, {@code 0,2,10}). Run from the repository root:
 * <pre>./tally bench read-latency [RATES [SECONDS [DELAYS_MS]]]</pre>
 */
public final class ReadLatencyBench {
    private static final Pattern IN_FLIGHT = Pattern.compile("^tally_read_in_flight_requests\\S*\\s+(\\S+)$", Pattern.MULTILINE);

    record Phase(String workload, int rate, int delayMs, OpenLoop.Result result, int serviceMaxInFlight) {}

    public static void main(String[] args) throws Exception {
        BenchRun.begin("read-latency");
        int status = 1;
        try {
            run(args);
            status = 0;
        } catch (Exception | Error e) {
            e.printStackTrace();
        } finally { // Netty and SDK threads would keep the JVM alive after a failure
            System.exit(status);
        }
    }

    static void run(String[] all) throws Exception {
        // --quick (what ./tally bench --quick passes to every benchmark of the set): a smoke run of under a minute.
        boolean quick = Arrays.asList(all).contains("--quick");
        String[] args = Arrays.stream(all).filter(a -> !a.equals("--quick")).toArray(String[]::new);
        int[] rates = args.length > 0 ? Arrays.stream(args[0].split(",")).mapToInt(Integer::parseInt).toArray()
                : quick ? new int[] {300, 100} : new int[] {3000, 100};
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : quick ? 5 : 15;
        int[] delays = args.length > 2 ? Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray()
                : quick ? new int[] {0, 10} : new int[] {0, 2, 10};
        for (String quiet : List.of("io.tally.read", "com.azure", "reactor", "io.netty")) { // the table counts what they would log
            ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(quiet)).setLevel(ch.qos.logback.classic.Level.OFF);
        }
        reactor.core.publisher.Hooks.onErrorDropped(e -> { }); // as ReadMain.main does
        Path root = Files.exists(Path.of("docs")) ? Path.of(".") : Path.of("..");
        double loadStart = load();
        LocalCosmos cosmos = LocalCosmos.startPrivate();
        CosmosControl control = cosmos.control();
        BenchRun.begin("read-latency").cosmos(control);
        BenchResults results = new BenchResults("read-latency", "read-service under added Cosmos latency",
                "./tally bench read-latency " + (quick && args.length == 0 ? "--quick" : join(rates) + " " + seconds));
        ReadSettings settings = ReadSettings.load(new String[] {"--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=bench",
                "--read.http.port=0"}, Map.of());
        StringBuilder rows = new StringBuilder();
        String threadsBefore;
        String threadsAfter;
        try (ReadMain read = new ReadMain(settings).start()) {
            long hourNow = TimeUnit.HOUR.bucketIndex(Instant.now());
            try (CosmosAsyncClient raw = ReadMain.cosmosClient(settings)) {
                load(raw.getDatabase("bench").getContainer("buckets"), hourNow);
            }
            HttpClient http = HttpClient.create(ConnectionProvider.builder("bench").maxConnections(1024)
                    .pendingAcquireMaxCount(-1).pendingAcquireTimeout(Duration.ofSeconds(60)).build())
                    .baseUrl("http://127.0.0.1:" + read.port());
            String from = TimeUnit.HOUR.bucketStart(hourNow - 71).toString();
            String to = TimeUnit.HOUR.bucketStart(hourNow + 1).toString();
            IntFunction<Mono<Integer>> point = i -> ReadServiceBench.get(http, "/v1/buckets/" + ReadServiceBench.enc("bench|" + ReadServiceBench.entity())
                    + "/" + ReadServiceBench.enc(ReadServiceBench.id(hourNow - ThreadLocalRandom.current().nextInt(72))));
            IntFunction<Mono<Integer>> range = i -> ReadServiceBench.get(http, "/v1/buckets/" + ReadServiceBench.enc("bench|" + ReadServiceBench.entity())
                    + "?grade=spend-per-customer&unit=hour&from=" + from + "&to=" + to);

            OpenLoop.run(Math.min(rates[0], 500), 5, Duration.ofSeconds(10), i -> (i % 2 == 0 ? point : range).apply(i)); // warm-up
            threadsBefore = threads();
            for (int rate : rates) {
                for (int delay : delays) {
                    control.setLatency(delay);
                    for (String workload : List.of("point read", "range 72")) {
                        Phase p = phase(http, workload, delay, rate, seconds, workload.equals("point read") ? point : range);
                        rows.append(row(p)).append('\n');
                        record(results, p);
                        System.out.println(row(p) + (p.result().firstError() == null ? "" : " first error: " + p.result().firstError()));
                    }
                }
            }
            control.setLatency(0);
            threadsAfter = threads();
        }
        results.note("Open loop at " + join(rates) + " req/s, " + seconds + " s per phase; latency from each request's due time to its answer.");
        results.note("Threads of the JVM (service + generator) before the first phase: " + threadsBefore + "; after the last: " + threadsAfter);
        Path data = results.write(root.resolve(BenchResults.DATA_DIR));
        String md = markdown(join(rates), seconds, loadStart, rows.toString(), threadsBefore, threadsAfter);
        io.tally.benchmarks.sink.SinkLatencyBench.writePage(root.resolve("docs/benchmarks/read-latency.md"), md);
        System.out.println(md + "\nwritten " + data.toAbsolutePath());
    }

    /** ReadServiceBench's data set (1,000 customers x 80 hours), retrying what a loaded endpoint refused. */
    static void load(com.azure.cosmos.CosmosAsyncContainer container, long hourNow) {
        List<com.azure.cosmos.models.CosmosItemOperation> ops = ReadServiceBench.dataSet(hourNow);
        for (int attempt = 1; !ops.isEmpty(); attempt++) {
            if (attempt > 5) throw new IllegalStateException(ops.size() + " documents were not written after 5 attempts");
            List<com.azure.cosmos.models.CosmosItemOperation> failed = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
            container.executeBulkOperations(reactor.core.publisher.Flux.fromIterable(ops))
                    .doOnNext(r -> { if (r.getResponse() == null || !r.getResponse().isSuccessStatusCode()) failed.add(r.getOperation()); })
                    .blockLast(Duration.ofMinutes(10));
            ops = failed;
        }
    }

    /** One phase, sampling the service's own in-flight gauge once a second while it runs. */
    static Phase phase(HttpClient http, String workload, int delay, int rate, int seconds, IntFunction<Mono<Integer>> call)
            throws InterruptedException {
        int[] serviceMax = {0};
        Thread sampler = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(1000);
                    String text = http.get().uri("/metrics").responseContent().aggregate().asString().block(Duration.ofSeconds(5));
                    Matcher m = IN_FLIGHT.matcher(text == null ? "" : text);
                    if (m.find()) serviceMax[0] = Math.max(serviceMax[0], (int) Double.parseDouble(m.group(1)));
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // a scrape that failed under load is no sample
                }
            }
        }, "bench-in-flight");
        sampler.setDaemon(true);
        sampler.start();
        OpenLoop.Result r = OpenLoop.run(rate, seconds, Duration.ofSeconds(10), call);
        sampler.interrupt();
        sampler.join();
        return new Phase(workload, rate, delay, r, serviceMax[0]);
    }

    static void record(BenchResults results, Phase p) {
        String scenario = p.workload() + ", " + p.rate() + " req/s, " + p.delayMs() + " ms";
        OpenLoop.Result r = p.result();
        results.figure(scenario, "avg", r.meanMs(), "ms").figure(scenario, "p50", r.ms(50), "ms")
               .figure(scenario, "p99", r.ms(99), "ms").figure(scenario, "p99.9", r.ms(99.9), "ms")
               .figure(scenario, "errors", r.errors(), "requests").figure(scenario, "max in flight (service)", p.serviceMaxInFlight(), "requests");
        for (int s = 0; s < r.perSecond().size(); s++) {
            var h = r.perSecond().get(s);
            if (h.getTotalCount() == 0) continue;
            String chart = p.workload() + " at " + p.rate() + " req/s";
            results.point(chart + ": p99 per second", p.delayMs() + " ms", "ms", s, h.getValueAtPercentile(99) / 1000.0);
            results.point(chart + ": p50 per second", p.delayMs() + " ms", "ms", s, h.getValueAtPercentile(50) / 1000.0);
        }
    }

    static String row(Phase p) {
        OpenLoop.Result r = p.result();
        int third = Math.max(1, r.perSecond().size() / 3);
        Map<Integer, Integer> bad = new TreeMap<>(r.statuses());
        bad.remove(200);
        return String.format(Locale.ROOT, "| %s | %,d | %d ms | %,d | %s | %.2f | %.2f | %.2f | %.2f | %.1f | %.2f → %.2f | %d / %d | %,d |",
                p.workload(), p.rate(), p.delayMs(), r.sent(), r.errors() == 0 ? "0" : r.errors() + " " + bad, r.meanMs(), r.ms(50), r.ms(99),
                r.ms(99.9), r.all().getMaxValue() / 1000.0, r.ms(99, 0, third), r.ms(99, r.perSecond().size() - third, r.perSecond().size()),
                r.maxInFlight(), p.serviceMaxInFlight(), r.lateSends());
    }

    /** Live threads by name family: Reactor Netty event loops, Cosmos SDK threads, the rest. */
    static String threads() {
        Map<String, Integer> byFamily = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            String family = n.startsWith("reactor-http") ? "reactor-http event loops"
                    : n.startsWith("cosmos") || n.contains("cosmos") ? "cosmos SDK"
                    : n.startsWith("parallel") || n.startsWith("boundedElastic") ? "reactor schedulers" : "other";
            byFamily.merge(family, 1, Integer::sum);
        }
        return byFamily.toString();
    }

    private static String join(int[] values) {
        return String.join(",", Arrays.stream(values).mapToObj(Integer::toString).toList());
    }

    static String markdown(String rates, int seconds, double loadStart, String rows, String threadsBefore, String threadsAfter) {
        return "# read-service under added Cosmos latency\n\n"
                + "Generated by `benchmarks/src/main/java/io/tally/benchmarks/read/ReadLatencyBench.java` on " + Instant.now().toString().substring(0, 16)
                + String.format(Locale.ROOT, " UTC. Machine: %d cores shared with other engineers' builds (load average %.1f at the start, "
                        + "%.1f at the end). The Cosmos endpoint (one Node thread), read-service and the load generator share these cores.%n%n",
                        Runtime.getRuntime().availableProcessors(), loadStart, load())
                + "Command (from the repository root): `./tally bench read-latency "
                + rates + " " + seconds + "`.\n\n"
                + String.format(Locale.ROOT, "Open loop at %s req/s for %d s per phase (after a 5 s warm-up): request *i* is due at "
                        + "start + i/rate and sent then; latency runs from that due time to the answer, so queueing shows. The delay is "
                        + "added by the local endpoint to every Cosmos request (`PUT /latency`). 1,000 customers × 80 hour buckets; a point "
                        + "read of one of the last 72 hours, or the 72-hour range in one partition (`GET /v1/buckets/{pk}?grade&unit&from&to`).%n%n",
                        rates, seconds)
                + "| workload | rate req/s | added delay | sent | errors (by status; 503 = shed, -1 = client error/timeout) | avg ms | p50 | p99 | p99.9 "
                + "| max ms | p99 first third → last third | most in flight: generator / service | late sends (>1 ms) |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
                + rows
                + "\nThreads of this JVM (service and generator) before the first phase: " + threadsBefore + "; after the last: "
                + threadsAfter + ". Per-second p50/p99 series per phase are in `docs/benchmarks/data/read-latency.json` and the plots "
                + "of docs/benchmarks.md.\n";
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
}
