package io.tally.cosmos;

import com.azure.core.util.Context;
import com.azure.cosmos.CosmosDiagnosticsContext;
import com.azure.cosmos.CosmosDiagnosticsHandler;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SDK's diagnostics logger, sampled: the first few operations per window that failed or crossed a
 * threshold are logged in full, the rest only counted, and the counts (by status:substatus) are logged
 * once when the window closes. During an outage every request fails, and logging each failure's full
 * diagnostics (several KB of JSON) at thousands a second filled the heap and the disk faster than the
 * retries did anything useful.
 *
 * <p>Thread-safe: the SDK calls it from its response threads.
 */
public final class SampledDiagnosticsLogger implements CosmosDiagnosticsHandler {
    private static final Logger log = LoggerFactory.getLogger(SampledDiagnosticsLogger.class);

    private final CosmosDiagnosticsHandler full;
    private final int perWindow;
    private final long windowNanos;
    private final AtomicLong windowStart = new AtomicLong(System.nanoTime());
    private final AtomicInteger logged = new AtomicInteger();
    private final Map<String, LongAdder> suppressed = new ConcurrentHashMap<>();

    public SampledDiagnosticsLogger(int perWindow, Duration window) {
        this(CosmosDiagnosticsHandler.DEFAULT_LOGGING_HANDLER, perWindow, window);
    }

    SampledDiagnosticsLogger(CosmosDiagnosticsHandler full, int perWindow, Duration window) {
        this.full = full;
        this.perWindow = perWindow;
        this.windowNanos = window.toNanos();
    }

    @Override
    public void handleDiagnostics(CosmosDiagnosticsContext ctx, Context traceContext) {
        if (!ctx.isFailure() && !ctx.isThresholdViolated()) return;
        rollWindow();
        if (logged.incrementAndGet() <= perWindow) {
            full.handleDiagnostics(ctx, traceContext);
        } else {
            suppressed.computeIfAbsent(ctx.getStatusCode() + ":" + ctx.getSubStatusCode(), k -> new LongAdder()).increment();
        }
    }

    private void rollWindow() {
        long start = windowStart.get();
        long now = System.nanoTime();
        if (now - start < windowNanos || !windowStart.compareAndSet(start, now)) return;
        logged.set(0);
        if (suppressed.isEmpty()) return;
        StringBuilder counts = new StringBuilder();
        long total = 0;
        for (Map.Entry<String, LongAdder> e : suppressed.entrySet()) {
            long n = e.getValue().sumThenReset();
            if (n == 0) continue;
            total += n;
            counts.append(counts.isEmpty() ? "" : ", ").append(e.getKey()).append('=').append(n);
        }
        if (total > 0) {
            log.warn("Cosmos diagnostics of {} more failed or slow operations not logged in the last {} s (by status:substatus: {})",
                    total, Duration.ofNanos(now - start).toSeconds(), counts);
        }
    }
}
