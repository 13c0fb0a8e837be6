package io.tally.ingest.rules;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import io.tally.rules.state.RulesState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the deployment's rules record every interval and calls {@code onNewer} once when a generation other than the
 * one this process counts was applied. Why a running instance must stop then: it would go on counting the old rules
 * past the new generation's seam, and the events it took would miss the grades added there (the seam is set so that an
 * instance stopping within one interval takes none). A failed read is logged and tried again next interval: an
 * unreachable Cosmos also stops the sink, and the stream threads must not stop for it.
 */
public final class RulesWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RulesWatch.class);

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "tally-rules-watch");
        t.setDaemon(true);
        return t;
    });
    private final DeploymentRules deployment;
    private final long generation;
    private final Runnable onNewer;
    private boolean failing;

    public RulesWatch(DeploymentRules deployment, long generation, Duration interval, Runnable onNewer) {
        this.deployment = deployment;
        this.generation = generation;
        this.onNewer = onNewer;
        timer.scheduleWithFixedDelay(this::check, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void check() {
        Optional<RulesState> now;
        try {
            now = deployment.current();
        } catch (RuntimeException e) {
            if (!failing) log.warn("cannot read the rules record (will try again every interval): {}", e.toString());
            failing = true;
            return;
        }
        if (failing) log.info("the rules record is readable again");
        failing = false;
        if (now.isEmpty() || now.get().generation() == generation) return;
        log.error("rules generation {} was applied ({}), and this process counts generation {}: stopping; start it again with the"
                + " applied rules file", now.get().generation(), DeploymentRules.describe(now.get()), generation);
        timer.shutdown();
        onNewer.run();
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
