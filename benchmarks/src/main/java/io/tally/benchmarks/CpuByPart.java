package io.tally.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * CPU used by each part of the one-JVM pipeline while a scenario runs, in cores: Java threads grouped by
 * name, the JVM's own work, and the local Cosmos endpoint's Node process. On 2 shared cores throughput is
 * bound by whichever part runs near a whole core (one stream thread can use no more than one) or by the sum
 * reaching the cores, so this names the stage that bounds a run.
 *
 * <p>Threads are sampled every half second, so a thread that ends between samples loses at most its last half
 * second. The JVM's own threads (garbage collection, JIT compilation, the VM thread) are not Java threads; they
 * are read from Linux's per-thread accounting ({@code /proc/self/task}) by their names. The process CPU that
 * neither accounts for (threads that ended between samples, and the rest) is a row of its own.
 */
final class CpuByPart implements AutoCloseable {
    /** A UUID, or a run of digits: instances of one kind of thread differ only by those. */
    private static final Pattern INSTANCE = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\\d+");
    private static final double MIN_SHARE = 0.02;
    /** Threads of the benchmark itself (loadgen's producing loop, the ground truth, the CPU sampler) start with this. */
    static final String HARNESS_PREFIX = "bench-";
    /** The part of those threads and the freshness probe's. */
    static final String HARNESS_PART = "benchmark: loadgen's loop, ground truth, probes";
    /** The row of this JVM's CPU less the benchmark's own threads: what the pipeline used. */
    static final String PIPELINE = "this JVM less the benchmark's own threads (the pipeline)";

    /** One row: a part and the cores it used on average over the measured span. */
    record Part(String name, double cores) {}

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private final OptionalLong nodePid;
    private final Map<Long, Long> startNanos = new HashMap<>();
    private final Map<Long, Long> lastNanos = new ConcurrentHashMap<>();
    private final Map<Long, String> names = new ConcurrentHashMap<>();
    /** The JVM's own threads by Linux thread id: CPU nanoseconds at the start and at the last sample, and the part. */
    private final Map<Integer, Long> vmStart = new HashMap<>();
    private final Map<Integer, Long> vmLast = new ConcurrentHashMap<>();
    private final Map<Integer, String> vmNames = new ConcurrentHashMap<>();
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bench-cpu-sampler");
        t.setDaemon(true);
        return t;
    });
    private final long wallStart = System.nanoTime();
    private final long processStart;
    private final long nodeStart;

    private CpuByPart(OptionalLong nodePid) {
        this.nodePid = nodePid;
        sample();
        startNanos.putAll(lastNanos);
        vmStart.putAll(vmLast);
        this.processStart = os.getProcessCpuTime();
        this.nodeStart = nodeCpuNanos();
        sampler.scheduleAtFixedRate(this::sample, 500, 500, TimeUnit.MILLISECONDS);
    }

    /** Starts measuring now; {@code nodePid} is the local Cosmos endpoint's process when this JVM started it. */
    static CpuByPart start(OptionalLong nodePid) {
        return new CpuByPart(nodePid);
    }

    /**
     * The part a thread belongs to: its role where its name says it (a stream thread's name starts with its
     * application id, which differs per run), else its name with instance numbers as #.
     */
    static String part(String threadName) {
        if (threadName.contains("StreamThread")) {
            return threadName.contains("producer") ? "ingest-app: stream thread's producer I/O"
                    : threadName.contains("consumer") ? "ingest-app: stream thread's consumer I/O"
                    : "ingest-app: stream thread (stages 1-6)";
        }
        if (threadName.equals("tally-sink")) return "ingest-app: sink loop";
        if (threadName.startsWith("bulk-executor")) return "Cosmos SDK: bulk executor (sink)";
        if (threadName.startsWith("reactor-http-epoll")) return "Cosmos SDK: HTTP I/O";
        if (threadName.startsWith("transport-response")) return "Cosmos SDK: response handling";
        if (threadName.startsWith(HARNESS_PREFIX) || threadName.startsWith("freshness-")) return HARNESS_PART;
        if (threadName.contains("loadgen")) return "loadgen";
        if (threadName.startsWith("data-plane-kafka-request-handler")) return "Kafka broker: request handlers";
        if (threadName.startsWith("data-plane-kafka-network-thread")) return "Kafka broker: network threads";
        return INSTANCE.matcher(threadName).replaceAll("#");
    }

    /** The part of a JVM-internal thread by its Linux name (15 characters at most), or null for a Java thread. */
    static String vmPart(String comm) {
        if (comm.startsWith("GC Thread") || comm.startsWith("G1 ")) return "JVM: garbage collection";
        if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) return "JVM: JIT compilation";
        if (comm.equals("VM Thread") || comm.startsWith("VM Periodic")) return "JVM: VM thread and periodic tasks";
        return null;
    }

    private void sampleVm() {
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            tasks.forEach(t -> {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    String part = vmPart(comm(stat));
                    if (part == null) return;
                    int tid = Integer.parseInt(t.getFileName().toString());
                    vmLast.put(tid, cpuNanos(stat));
                    vmNames.putIfAbsent(tid, part);
                } catch (Exception e) {
                    // the thread ended since it was listed
                }
            });
        } catch (Exception e) {
            // not Linux: the JVM's own work stays in the remainder row
        }
    }

    /** The thread's name in a /proc stat line: in parentheses, and it may hold spaces and parentheses itself. */
    static String comm(String stat) {
        return stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    }

    /** utime + stime of a /proc stat line, in nanoseconds (clock ticks of 1/100 s on Linux). */
    private static long cpuNanos(String stat) {
        // Fields after the command name, which is in parentheses and may hold spaces: state is field 3, utime 14, stime 15.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
    }

    private void sample() {
        sampleVm();
        for (long id : threads.getAllThreadIds()) {
            long cpu = threads.getThreadCpuTime(id);
            if (cpu < 0) continue; // ended since the id was listed
            lastNanos.put(id, cpu);
            names.computeIfAbsent(id, i -> {
                var info = threads.getThreadInfo(i);
                return info == null ? "?" : part(info.getThreadName());
            });
        }
    }

    /** The parts over the span since {@link #start}, busiest first; parts under 2% of the process are one row. */
    List<Part> stop() {
        sampler.shutdownNow();
        sample();
        double wall = System.nanoTime() - wallStart;
        Map<String, Long> byName = new HashMap<>();
        long threadTotal = 0;
        for (Map.Entry<Long, Long> e : lastNanos.entrySet()) {
            long used = e.getValue() - startNanos.getOrDefault(e.getKey(), 0L);
            byName.merge(names.get(e.getKey()), used, Long::sum);
            threadTotal += used;
        }
        long process = os.getProcessCpuTime() - processStart;
        List<Part> parts = new ArrayList<>();
        long small = 0;
        for (Map.Entry<String, Long> e : byName.entrySet()) {
            if (e.getValue() < MIN_SHARE * process) small += e.getValue();
            else parts.add(new Part(e.getKey(), e.getValue() / wall));
        }
        Map<String, Long> vm = new HashMap<>();
        for (Map.Entry<Integer, Long> e : vmLast.entrySet()) {
            long used = e.getValue() - vmStart.getOrDefault(e.getKey(), 0L);
            vm.merge(vmNames.get(e.getKey()), used, Long::sum);
            threadTotal += used;
        }
        vm.forEach((name, used) -> parts.add(new Part(name, used / wall)));
        parts.sort(Comparator.comparingDouble(Part::cores).reversed());
        parts.add(new Part("other threads (each under 2% of the process)", small / wall));
        parts.add(new Part("JVM: threads ended between samples, and the rest", Math.max(0, process - threadTotal) / wall));
        parts.add(new Part("this JVM in all", process / wall));
        // Loadgen's own sender threads count as the benchmark's too: a deployment's producers run elsewhere.
        long harness = 0;
        for (Map.Entry<Long, Long> e : lastNanos.entrySet()) {
            String part = names.get(e.getKey());
            if (part != null && (part.equals(HARNESS_PART) || part.equals("loadgen"))) {
                harness += e.getValue() - startNanos.getOrDefault(e.getKey(), 0L);
            }
        }
        parts.add(new Part(PIPELINE, Math.max(0, process - harness) / wall));
        long node = nodeCpuNanos();
        if (node >= 0 && nodeStart >= 0) parts.add(new Part("local Cosmos endpoint (Node process)", (node - nodeStart) / wall));
        return parts;
    }

    /** Each part as a figure of {@code scenario}, in cores. */
    static void figures(BenchResults results, String scenario, List<Part> parts) {
        for (Part p : parts) results.figure(scenario, p.name(), p.cores(), "cores");
    }

    /** The Node process's user and system time from /proc (clock ticks of 1/100 s on Linux), or -1. */
    private long nodeCpuNanos() {
        if (nodePid.isEmpty()) return -1;
        try {
            return cpuNanos(Files.readString(Path.of("/proc", Long.toString(nodePid.getAsLong()), "stat")));
        } catch (Exception e) {
            return -1;
        }
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
