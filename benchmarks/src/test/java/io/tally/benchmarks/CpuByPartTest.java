package io.tally.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class CpuByPartTest {

    @Test
    void namesTheJvmsOwnThreadsByTheirLinuxNames() {
        assertThat(CpuByPart.vmPart("GC Thread#0")).isEqualTo("JVM: garbage collection"); // Parallel GC, the benches' collector
        assertThat(CpuByPart.vmPart("G1 Conc#0")).isEqualTo("JVM: garbage collection");
        assertThat(CpuByPart.vmPart("C2 CompilerThre")).isEqualTo("JVM: JIT compilation"); // Linux keeps 15 characters
        assertThat(CpuByPart.vmPart("C1 CompilerThre")).isEqualTo("JVM: JIT compilation");
        assertThat(CpuByPart.vmPart("VM Thread")).isEqualTo("JVM: VM thread and periodic tasks");
        assertThat(CpuByPart.vmPart("VM Periodic Tas")).isEqualTo("JVM: VM thread and periodic tasks");
        assertThat(CpuByPart.vmPart("main")).isNull();
        assertThat(CpuByPart.vmPart("kafka-producer-")).isNull();
        assertThat(CpuByPart.comm("4242 (C2 CompilerThre) S 1 1")).isEqualTo("C2 CompilerThre");
    }

    /** The names above are HotSpot's: this JVM's own threads, as Linux lists them, must include a JIT and a GC thread. */
    @Test
    void findsThisJvmsCompilerAndCollectorThreads() throws Exception {
        Path tasks = Path.of("/proc/self/task");
        assumeTrue(Files.isDirectory(tasks), "per-thread accounting is read from Linux's /proc; not available here");
        List<String> parts;
        try (Stream<Path> ts = Files.list(tasks)) {
            parts = ts.map(t -> {
                try {
                    return CpuByPart.vmPart(CpuByPart.comm(Files.readString(t.resolve("stat"))));
                } catch (Exception e) {
                    return null; // the thread ended since it was listed
                }
            }).filter(p -> p != null).toList();
        }
        assertThat(parts).contains("JVM: JIT compilation", "JVM: garbage collection", "JVM: VM thread and periodic tasks");
    }

    @Test
    void thePipelineRowLeavesOutTheBenchmarksOwnThreads() throws Exception {
        assertThat(CpuByPart.part("bench-loadgen-and-truth")).isEqualTo(CpuByPart.HARNESS_PART);
        assertThat(CpuByPart.part("freshness-poller")).isEqualTo(CpuByPart.HARNESS_PART);
        assertThat(CpuByPart.part("tally-sink")).isEqualTo("ingest-app: sink loop");
        java.util.concurrent.atomic.AtomicBoolean spin = new java.util.concurrent.atomic.AtomicBoolean(true);
        long[] result = new long[1]; // read after the join, so the loop's work is not dead code
        Thread busy = new Thread(() -> {
            long x = 0;
            while (spin.get()) x += System.nanoTime() % 7;
            result[0] = x;
        }, CpuByPart.HARNESS_PREFIX + "busy");
        CpuByPart cpu = CpuByPart.start(java.util.OptionalLong.empty());
        busy.start();
        Thread.sleep(1_500);
        List<CpuByPart.Part> parts = cpu.stop();
        spin.set(false);
        busy.join();
        assertThat(result[0]).isNotNegative();
        double all = parts.stream().filter(p -> p.name().equals("this JVM in all")).findFirst().orElseThrow().cores();
        double pipeline = parts.stream().filter(p -> p.name().equals(CpuByPart.PIPELINE)).findFirst().orElseThrow().cores();
        assertThat(all - pipeline).as("the spinning harness thread (a loaded machine may give it little of a core)").isGreaterThan(0.1);
    }
}
