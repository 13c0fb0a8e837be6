package io.tally.read;

import com.azure.core.util.Context;
import com.azure.cosmos.CosmosDiagnosticsContext;
import com.azure.cosmos.CosmosDiagnosticsHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs Cosmos diagnostics of operations above the latency thresholds (read.cosmos.diagnostics.*): one WARN line with
 * operation, status:substatus, duration, RU, retries and regions, and the SDK's full diagnostics JSON at DEBUG
 * (logger {@code io.tally.read.SlowCosmosLog}). Failures are logged the same way; the mapping to an HTTP status is
 * logged by {@link Problem}. No partition key values or document ids are logged. Called on SDK threads; never blocks
 * beyond the logger's own appender.
 */
final class SlowCosmosLog implements CosmosDiagnosticsHandler {
    private static final Logger log = LoggerFactory.getLogger(SlowCosmosLog.class);

    @Override
    public void handleDiagnostics(CosmosDiagnosticsContext ctx, Context traceContext) {
        if (!ctx.isThresholdViolated() && !ctx.isFailure()) return;
        if (!log.isWarnEnabled()) return;
        log.warn("Cosmos {} {} {}: {}:{} in {} ms, {} RU, {} retries, regions {}{}",
                ctx.isFailure() ? "failed" : "slow", ctx.getOperationType(), ctx.getResourceType(),
                ctx.getStatusCode(), ctx.getSubStatusCode(), ctx.getDuration() == null ? "?" : ctx.getDuration().toMillis(),
                ctx.getTotalRequestCharge(), ctx.getRetryCount(), ctx.getContactedRegionNames(),
                log.isDebugEnabled() ? "; diagnostics " + ctx.toJson() : "");
    }
}
