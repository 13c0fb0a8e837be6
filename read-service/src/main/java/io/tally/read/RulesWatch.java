package io.tally.read;

import com.azure.cosmos.CosmosException;
import io.tally.rules.state.RulesState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the rules read-service answers with in step with the deployment's rules record: reads it at start, then again
 * every {@code read.rules-refresh.ms} on a thread of its own (the read blocks; never on an event loop). Any change of
 * the record (a new generation, or a grade's history marked complete) swaps in a new {@link RulesView} through one
 * volatile reference; requests take whichever snapshot is current when they start.
 *
 * <p>A failed refresh keeps the rules answered so far. Failures are logged when they start or change, again every
 * {@link #RELOG} while they last, and once when a read succeeds again: a store down for an hour costs a dozen lines,
 * not one every refresh. A record older than the one answered with (a stale replica, a restored backup) is not
 * answered, nor is a record that vanished replaced by the file: going back would answer values the newer rules no
 * longer count.
 */
final class RulesWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RulesWatch.class);
    static final Duration RELOG = Duration.ofMinutes(5);

    /** Reads the record; empty when the container holds none. */
    interface Source {
        Optional<RulesState> read();
    }

    private final Source source;
    private final Duration every;
    private final Clock clock;
    private volatile RulesView view;
    /** Whether the container has been asked successfully at least once: until then the file is a guess. */
    private volatile boolean known;
    private ScheduledExecutorService timer;

    // Touched by one refresh at a time (the starting thread, then the timer's only thread).
    private String failure;
    private Instant failureLogged;
    private int failures;

    RulesWatch(Source source, RulesView file, Duration every, Clock clock) {
        this.source = source;
        this.view = file;
        this.every = every;
        this.clock = clock;
    }

    /** The rules to answer a request with. */
    RulesView current() {
        return view;
    }

    /**
     * Whether the rules answered with are the deployment's: the record was read, or the container was seen to hold
     * none. False while the very first read fails; readiness says so.
     */
    boolean known() {
        return known;
    }

    /** Refreshes every {@code every} from now on. */
    void start() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rules-refresh");
            t.setDaemon(true);
            return t;
        });
        long ms = every.toMillis();
        timer.scheduleWithFixedDelay(this::refreshGuarded, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Reads the record once and swaps it in when it changed. */
    void refresh() {
        Optional<RulesState> read;
        try {
            read = source.read();
        } catch (RuntimeException e) {
            failed("cannot read the rules record (" + reason(e) + ")");
            return;
        }
        RulesView now = view;
        Optional<RulesState> answered = now.record();
        if (read.isEmpty()) {
            if (answered.isPresent()) {
                failed("the rules record is gone from the container");
                return;
            }
            if (!known) log.info("no rules record in the container: read-service answers with {}", now.summary());
            succeeded();
            return;
        }
        RulesState state = read.get();
        if (answered.isPresent() && state.equals(answered.get())) {
            succeeded();
            return;
        }
        if (answered.isPresent() && state.generation() < answered.get().generation()) {
            failed("the rules record read is generation " + state.generation() + ", older than generation "
                    + answered.get().generation());
            return;
        }
        RulesView next;
        try {
            next = RulesView.ofRecord(state);
        } catch (RuntimeException e) {
            failed("the rules of the record's generation " + state.generation() + " do not parse (" + cut(e.getMessage()) + ")");
            return;
        }
        view = next;
        succeeded();
        log.info("read-service answers with {}", next.summary());
        next.disagreements().forEach(d -> log.warn("rules record generation {}: {}", state.generation(), d));
    }

    private void refreshGuarded() {
        try {
            refresh();
        } catch (RuntimeException e) { // an exception would cancel every later refresh
            log.error("rules refresh failed unexpectedly; trying again in {} ms", every.toMillis(), e);
        }
    }

    private void succeeded() {
        known = true;
        if (failures > 0) log.info("rules record read again after {} failed attempt(s)", failures);
        failures = 0;
        failure = null;
        failureLogged = null;
    }

    private void failed(String what) {
        failures++;
        Instant now = clock.instant();
        if (!what.equals(failure) || !now.isBefore(failureLogged.plus(RELOG))) {
            log.warn("{}; answering with {} (failed {} time(s) in a row, retrying every {} ms)", what, view.summary(), failures,
                    every.toMillis());
            failure = what;
            failureLogged = now;
        }
    }

    /** What went wrong, without the SDK's diagnostics (they name hosts and activity ids) and stable across retries. */
    private static String reason(RuntimeException e) {
        if (e instanceof CosmosException c) return "Cosmos " + c.getStatusCode() + ":" + c.getSubStatusCode();
        return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + cut(e.getMessage()));
    }

    /** One line, short: a record's or rules file's problems can run long and span lines. */
    private static String cut(String s) {
        if (s == null) return null;
        String line = s.replaceAll("\\s+", " ");
        return line.length() <= 200 ? line : line.substring(0, 200) + "...";
    }

    @Override
    public void close() {
        if (timer != null) timer.shutdownNow();
    }
}
