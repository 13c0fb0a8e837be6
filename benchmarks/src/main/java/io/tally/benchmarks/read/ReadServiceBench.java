package io.tally.benchmarks.read;

import com.azure.cosmos.CosmosAsyncClient;
import com.azure.cosmos.CosmosAsyncContainer;
import com.azure.cosmos.models.CosmosBulkOperations;
import com.azure.cosmos.models.CosmosItemOperation;
import com.azure.cosmos.models.CosmosQueryRequestOptions;
import com.azure.cosmos.models.FeedResponse;
import com.azure.cosmos.models.PartitionKey;
import com.azure.cosmos.models.SqlParameter;
import com.azure.cosmos.models.SqlQuerySpec;
import io.tally.benchmarks.BenchRun;
import io.tally.model.BucketDocument;
import io.tally.model.EntityBucket;
import io.tally.model.EntityBucketId;
import io.tally.model.EntityBucketJson;
import io.tally.testsupport.cosmos.EntityBuckets;
import io.tally.model.TimeUnit;
import io.tally.read.ReadMain;
import io.tally.read.ReadSettings;
import io.tally.testsupport.cosmos.LocalCosmos;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * Open-loop benchmark of read-service. Run from the repository root with one command:
 *
 * <pre>
 * ./tally bench read-service
 * </pre>
 *
 * (optional, as JVM options: {@code TALLY_BENCH_JAVA_OPTS="-Dbench.rate=3000 -Dbench.seconds=60 -Dbench.entities=1000"}). It starts a private local Cosmos
 * endpoint, writes {@code entities} customers x 80 hour buckets of spend-per-customer, starts read-service in this JVM and
 * then, at a fixed arrival rate, runs four phases: point reads and 72-bucket range queries, each first as the raw SDK
 * call (the same Cosmos operation read-service makes, on a client built with the service's own settings) and then through the HTTP API. Every request has an intended send
 * time ({@code start + i / rate}); its latency is measured from that time to the last byte of the answer, so when the
 * generator or the service falls behind the queueing shows up in the numbers instead of being hidden (no coordinated
 * omission). The service's own overhead is measured twice: HTTP minus raw SDK phase, and inside the service from its
 * Prometheus timers (request time minus Cosmos time). Machine load is sampled from /proc during each phase.
 * Results: stdout and benchmarks/target/read-service-bench.md.
 */
public final class ReadServiceBench {
    static final int RATE = Integer.getInteger("bench.rate", 3000);
    static final int SECONDS = Integer.getInteger("bench.seconds", 60);
    static final int WARMUP_SECONDS = Integer.getInteger("bench.warmup-seconds", 10);
    static final int ENTITIES = Integer.getInteger("bench.entities", 1000);
    static final int HOURS = 80;
    static final String DOMAIN = "bench";
    /** The rule's retention (35 days): the data set outlives any run. */
    static final int TTL_SECONDS = 3_024_000;

    final StringBuilder report = new StringBuilder();
    io.tally.testsupport.cosmos.CosmosControl control;

    public static void main(String[] args) throws Exception {
        new ReadServiceBench().run();
        System.exit(0);
    }

    void run() throws Exception {
        BenchRun.begin("read-service");
        // Under overload thousands of slow reads would be logged; the table counts them instead.
        for (String quiet : List.of("io.tally.read", "com.azure", "reactor", "io.netty")) {
            ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(quiet)).setLevel(ch.qos.logback.classic.Level.OFF);
        }
        reactor.core.publisher.Hooks.onErrorDropped(e -> { }); // as ReadMain.main does
        LocalCosmos cosmos = LocalCosmos.startPrivate();
        control = cosmos.control();
        BenchRun.begin("read-service").cosmos(control);
        String db = "bench";
        line("machine: %d cores (%s), %d GiB RAM, %s, Java %s; load average at start: %s",
                Runtime.getRuntime().availableProcessors(), cpuModel(), totalMemGiB(), System.getProperty("os.name"),
                System.getProperty("java.version"), Files.readString(Path.of("/proc/loadavg")).trim());
        line("rate %d req/s, %d s per phase (after %d s warm-up), %d entities x %d hour buckets", RATE, SECONDS, WARMUP_SECONDS, ENTITIES, HOURS);

        ReadSettings settings = ReadSettings.load(new String[] {"--cosmos.endpoint=" + cosmos.endpoint(), "--cosmos.database=" + db,
                "--read.http.port=0"}, Map.of());
        try (ReadMain read = new ReadMain(settings).start()) {
            CosmosAsyncClient raw = ReadMain.cosmosClient(settings); // the service's own client settings: a like-for-like baseline
            CosmosAsyncContainer container = raw.getDatabase(db).getContainer("buckets");
            long hourNow = TimeUnit.HOUR.bucketIndex(Instant.now());
            load(container, hourNow);

            HttpClient http = HttpClient.create(ConnectionProvider.builder("bench").maxConnections(512)
                            .pendingAcquireMaxCount(-1).pendingAcquireTimeout(Duration.ofSeconds(60)).build())
                    .baseUrl("http://127.0.0.1:" + read.port());
            String from = TimeUnit.HOUR.bucketStart(hourNow - 71).toString();
            String to = TimeUnit.HOUR.bucketStart(hourNow + 1).toString();
            // An entity bucket holds every grade of its hour: the range is one document per hour, whatever the grade.
            SqlQuerySpec rangeSql = new SqlQuerySpec("SELECT * FROM c WHERE c.unit = @unit "
                    + "AND c.bucket >= @from AND c.bucket < @to ORDER BY c.bucket ASC", List.of(
                    new SqlParameter("@unit", "hour"), new SqlParameter("@from", from), new SqlParameter("@to", to)));

            IntFunction<Mono<Integer>> sdkPoint = i -> {
                String e = entity(), pk = DOMAIN + "|" + e;
                return container.readItem(documentId(hourNow - ThreadLocalRandom.current().nextInt(72)), new PartitionKey(pk), EntityBucket.class)
                        .map(r -> r.getStatusCode());
            };
            IntFunction<Mono<Integer>> httpPoint = i -> {
                String pk = DOMAIN + "|" + entity();
                return get(http, "/v1/buckets/" + enc(pk) + "/" + enc(id(hourNow - ThreadLocalRandom.current().nextInt(72))));
            };
            IntFunction<Mono<Integer>> sdkRange = i -> container.queryItems(rangeSql,
                            new CosmosQueryRequestOptions().setPartitionKey(new PartitionKey(DOMAIN + "|" + entity())), EntityBucket.class)
                    .byPage(1000).map(FeedResponse::getResults).collectList()
                    .map(pages -> pages.stream().mapToInt(List::size).sum() == 72 ? 200 : 599);
            IntFunction<Mono<Integer>> httpRange = i -> get(http, "/v1/buckets/" + enc(DOMAIN + "|" + entity())
                    + "?grade=spend-per-customer&unit=hour&from=" + from + "&to=" + to);

            // Warm-up: JIT, connection pools, caches; not reported.
            run("warm-up", WARMUP_SECONDS, i -> (i % 2 == 0 ? httpPoint : httpRange).apply(i));
            run("warm-up", WARMUP_SECONDS / 2, i -> (i % 2 == 0 ? sdkPoint : sdkRange).apply(i));

            line("");
            line("| phase | sent | ok | errors | avg ms | p50 | p95 | p99 | p99.9 | max ms | late sends (>1 ms) | system CPU busy | this JVM | node |");
            line("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
            Phase sdkP = run("point read, raw SDK", SECONDS, sdkPoint);
            Scrape before = Scrape.of(http);
            Phase httpP = run("point read, HTTP", SECONDS, httpPoint);
            Scrape afterPoint = Scrape.of(http);
            Phase sdkR = run("range 72, raw SDK", SECONDS, sdkRange);
            Scrape beforeRange = Scrape.of(http);
            Phase httpR = run("range 72, HTTP", SECONDS, httpRange);
            Scrape afterRange = Scrape.of(http);
            for (Phase p : List.of(sdkP, httpP, sdkR, httpR)) line(p.row(cosmos));

            line("");
            line("| workload | target avg / p95 / p99 ms | HTTP avg / p95 / p99 ms | verdict | overhead over raw SDK (avg, p95, p99 ms) | in-service overhead (request - Cosmos time, avg ms) |");
            line("|---|---|---|---|---|---|");
            verdict("point read", httpP, sdkP, 3, 10, 50, afterPoint.minus(before), "point-read", "read");
            verdict("range query (72 buckets)", httpR, sdkR, 7, 15, 50, afterRange.minus(beforeRange), "range", "range");
            line("");
            line("load average at end: %s", Files.readString(Path.of("/proc/loadavg")).trim());
            line("");
            line("requests the Cosmos endpoint served, by kind, per phase (and errors seen by the load generator):");
            line("");
            endpointRequests.forEach((phase, kinds) -> { if (!phase.equals("warm-up")) line("- " + phase + ": `" + kinds + "`"); });
            raw.close();
        }
        Path out = Path.of("benchmarks", "target", "read-service-bench.md"); // from the repository root, as ./tally runs it
        Files.createDirectories(out.getParent());
        Files.writeString(out, report.append('\n').append(BenchRun.begin("read-service").markdown()).toString());
        System.out.println("\n" + report + "\nwritten to " + out.toAbsolutePath());
    }

    // --- data ---

    static String entity() {
        return "cust-" + ThreadLocalRandom.current().nextInt(ENTITIES);
    }

    /** The grade bucket's id, as the HTTP API names it. */
    static String id(long hour) {
        return "spend-per-customer|hour|" + hour;
    }

    /** The id of the entity bucket document holding it, as the SDK reads it. */
    static String documentId(long hour) {
        return EntityBucketId.main(TimeUnit.HOUR, hour);
    }

    /**
     * The data set, {@link #ENTITIES} customers x {@link #HOURS} hours of `spend-per-customer`, as upserts of the entity
     * bucket documents the pipeline would write for it.
     */
    static List<CosmosItemOperation> dataSet(long hourNow) {
        List<BucketDocument> grades = new ArrayList<>();
        for (int e = 0; e < ENTITIES; e++) {
            String pk = DOMAIN + "|cust-" + e;
            for (long h = hourNow - HOURS + 2; h <= hourNow + 1; h++) {
                BigDecimal v = BigDecimal.valueOf(ThreadLocalRandom.current().nextInt(1, 100_000), 2);
                grades.add(new BucketDocument(pk, id(h), "spend-per-customer", "hour", TimeUnit.HOUR.bucketStart(h).toString(), v, 1, v, v,
                        1, TTL_SECONDS, Instant.now().toString()));
            }
        }
        List<CosmosItemOperation> ops = new ArrayList<>();
        EntityBuckets.of(grades).forEach(d -> ops.add(CosmosBulkOperations.getUpsertItemOperation(EntityBucketJson.tree(d),
                new PartitionKey(d.pk()))));
        return ops;
    }

    void load(CosmosAsyncContainer container, long hourNow) {
        long start = System.nanoTime();
        List<CosmosItemOperation> ops = dataSet(hourNow);
        AtomicInteger failed = new AtomicInteger();
        container.executeBulkOperations(Flux.fromIterable(ops))
                .doOnNext(r -> { if (r.getResponse() == null || !r.getResponse().isSuccessStatusCode()) failed.incrementAndGet(); })
                .blockLast(Duration.ofMinutes(10));
        if (failed.get() > 0) throw new IllegalStateException(failed.get() + " documents were not written");
        line("loaded %,d documents in %.1f s", ops.size(), (System.nanoTime() - start) / 1e9);
    }

    static Mono<Integer> get(HttpClient http, String uri) {
        return http.get().uri(uri).responseSingle((res, body) -> body.asByteArray()
                .map(b -> res.status().code()).defaultIfEmpty(res.status().code()));
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    // --- the open-loop generator ---

    /**
     * Sends request i at {@code start + i / RATE} whatever happened to earlier ones (open loop), from one thread that
     * only subscribes (the calls are asynchronous), and records each latency from its intended send time.
     */
    Phase run(String name, int seconds, IntFunction<Mono<Integer>> call) throws InterruptedException {
        int total = RATE * seconds;
        long period = 1_000_000_000L / RATE;
        long[] latency = new long[total];
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> errorKinds = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(total);
        AtomicLong late = new AtomicLong();
        control.resetStats();
        CpuSample cpuStart = CpuSample.now();
        long start = System.nanoTime() + 50_000_000L;
        for (int i = 0; i < total; i++) {
            long intended = start + i * period;
            long now;
            while ((now = System.nanoTime()) < intended) {
                long wait = intended - now;
                if (wait > 200_000) java.util.concurrent.locks.LockSupport.parkNanos(wait - 100_000);
                else Thread.onSpinWait();
            }
            if (now - intended > 1_000_000) late.incrementAndGet();
            int index = i;
            Mono<Integer> m;
            try {
                m = call.apply(i);
            } catch (RuntimeException e) {
                m = Mono.error(e);
            }
            m.timeout(Duration.ofSeconds(10)).subscribe(
                    status -> {
                        latency[index] = System.nanoTime() - intended;
                        statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                        done.countDown();
                    },
                    error -> {
                        latency[index] = System.nanoTime() - intended;
                        statuses.computeIfAbsent(-1, s -> new AtomicInteger()).incrementAndGet();
                        errorKinds.computeIfAbsent(error instanceof com.azure.cosmos.CosmosException ce
                                ? "Cosmos " + ce.getStatusCode() + ":" + ce.getSubStatusCode() : error.getClass().getSimpleName(),
                                k -> new AtomicInteger()).incrementAndGet();
                        done.countDown();
                    });
        }
        boolean all = done.await(30, java.util.concurrent.TimeUnit.SECONDS);
        CpuSample cpuEnd = CpuSample.now();
        endpointRequests.put(name, control.stats().raw().path("byKind").toString()
                + (errorKinds.isEmpty() ? "" : "; client-side errors " + new TreeMap<>(errorKinds)));
        if (!all) statuses.computeIfAbsent(-2, s -> new AtomicInteger()).addAndGet((int) done.getCount());
        return new Phase(name, latency, new TreeMap<>(statuses), late.get(), cpuStart, cpuEnd);
    }

    final Map<String, String> endpointRequests = new java.util.LinkedHashMap<>();

    record Phase(String name, long[] latencyNanos, Map<Integer, AtomicInteger> statuses, long lateSends, CpuSample cpuStart, CpuSample cpuEnd) {
        long[] sorted() {
            long[] s = latencyNanos.clone();
            Arrays.sort(s);
            return s;
        }

        double avgMs() {
            return Arrays.stream(latencyNanos).average().orElse(0) / 1e6;
        }

        double pMs(double p) {
            long[] s = sorted();
            return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)] / 1e6;
        }

        int ok() {
            return statuses.getOrDefault(200, new AtomicInteger()).get();
        }

        String row(LocalCosmos cosmos) {
            int errors = latencyNanos.length - ok();
            String errorDetail = errors == 0 ? "0" : errors + " " + statuses.entrySet().stream().filter(e -> e.getKey() != 200)
                    .map(e -> (e.getKey() == -1 ? "error" : e.getKey() == -2 ? "no answer" : e.getKey().toString()) + "x" + e.getValue())
                    .toList();
            return String.format(Locale.ROOT, "| %s | %,d | %,d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %,d | %s | %s | %s |",
                    name, latencyNanos.length, ok(), errorDetail, avgMs(), pMs(50), pMs(95), pMs(99), pMs(99.9), pMs(100), lateSends,
                    cpuEnd.busyPercentSince(cpuStart), cpuEnd.jvmPercentSince(cpuStart),
                    cosmos.pid().isPresent() ? cpuEnd.pidPercentSince(cpuStart, cosmos.pid().getAsLong()) : "?");
        }
    }

    void verdict(String workload, Phase http, Phase sdk, double avg, double p95, double p99, Scrape delta, String endpoint, String op) {
        boolean ok = http.avgMs() < avg && http.pMs(95) < p95 && http.pMs(99) < p99;
        line(String.format(Locale.ROOT, "| %s | < %.0f / %.0f / %.0f | %.2f / %.2f / %.2f | %s | %+.2f, %+.2f, %+.2f | %s |", workload, avg, p95, p99,
                http.avgMs(), http.pMs(95), http.pMs(99), ok ? "meets" : "misses",
                http.avgMs() - sdk.avgMs(), http.pMs(95) - sdk.pMs(95), http.pMs(99) - sdk.pMs(99),
                delta.overhead(endpoint, op)));
    }

    // --- the service's own timers, from /metrics ---

    record Scrape(Map<String, Double> values) {
        static final Pattern LINE = Pattern.compile("^(tally_read_(?:requests|cosmos)_seconds_(?:sum|count)\\{[^}]*})\\s+(\\S+)$", Pattern.MULTILINE);

        static Scrape of(HttpClient http) {
            String text = http.get().uri("/metrics").responseContent().aggregate().asString().block(Duration.ofSeconds(10));
            Map<String, Double> v = new TreeMap<>();
            Matcher m = LINE.matcher(text);
            while (m.find()) v.put(m.group(1), Double.parseDouble(m.group(2)));
            return new Scrape(v);
        }

        Scrape minus(Scrape before) {
            Map<String, Double> d = new TreeMap<>();
            values.forEach((k, x) -> d.put(k, x - before.values.getOrDefault(k, 0.0)));
            return new Scrape(d);
        }

        double avgMs(String metric, String tag, String value) {
            double sum = 0, count = 0;
            for (Map.Entry<String, Double> e : values.entrySet()) {
                if (!e.getKey().contains(tag + "=\"" + value + "\"") || !e.getKey().contains("status=\"200\"")) continue;
                if (e.getKey().startsWith(metric + "_sum")) sum += e.getValue();
                if (e.getKey().startsWith(metric + "_count")) count += e.getValue();
            }
            return count == 0 ? Double.NaN : sum / count * 1000;
        }

        String overhead(String endpoint, String op) {
            double request = avgMs("tally_read_requests_seconds", "endpoint", endpoint);
            double cosmos = avgMs("tally_read_cosmos_seconds", "operation", op);
            return String.format(Locale.ROOT, "%.3f (request %.3f, Cosmos call %.3f)", request - cosmos, request, cosmos);
        }
    }

    // --- machine load, from /proc ---

    record CpuSample(long busy, long total, long jvmCpuNanos, long wallNanos, Map<Long, Long> pidTicks) {
        static CpuSample now() {
            try {
                String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
                long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
                long total = 0;
                for (int i = 1; i < f.length; i++) total += Long.parseLong(f[i]);
                long jvm = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
                Map<Long, Long> pids = new TreeMap<>();
                try (var dirs = Files.list(Path.of("/proc"))) {
                    dirs.filter(p -> p.getFileName().toString().matches("\\d+")).forEach(p -> {
                        try {
                            String stat = Files.readString(p.resolve("stat"));
                            String[] s = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                            pids.put(Long.parseLong(p.getFileName().toString()), Long.parseLong(s[11]) + Long.parseLong(s[12]));
                        } catch (Exception ignored) {
                            // the process ended
                        }
                    });
                }
                return new CpuSample(total - idle, total, jvm, System.nanoTime(), pids);
            } catch (Exception e) {
                return new CpuSample(0, 0, 0, System.nanoTime(), Map.of());
            }
        }

        String busyPercentSince(CpuSample s) {
            long t = total - s.total;
            return t == 0 ? "?" : String.format(Locale.ROOT, "%.0f%%", 100.0 * (busy - s.busy) / t);
        }

        /** Percent of one core. */
        String jvmPercentSince(CpuSample s) {
            return String.format(Locale.ROOT, "%.0f%%", 100.0 * (jvmCpuNanos - s.jvmCpuNanos) / (wallNanos - s.wallNanos));
        }

        String pidPercentSince(CpuSample s, long pid) {
            Long a = s.pidTicks.get(pid), b = pidTicks.get(pid);
            if (a == null || b == null) return "?";
            return String.format(Locale.ROOT, "%.0f%%", 100.0 * (b - a) / 100.0 / ((wallNanos - s.wallNanos) / 1e9));
        }
    }

    void line(String format, Object... args) {
        String s = args.length == 0 ? format : String.format(Locale.ROOT, format, args);
        report.append(s).append('\n');
        System.out.println(s);
    }

    static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("?");
        } catch (Exception e) {
            return "?";
        }
    }

    static long totalMemGiB() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getTotalMemorySize() >> 30;
    }
}
