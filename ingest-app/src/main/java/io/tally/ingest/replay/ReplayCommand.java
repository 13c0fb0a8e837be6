package io.tally.ingest.replay;

import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.ingest.app.IngestSettings;
import java.time.Instant;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command {@code ./tally replay --from T [--to T] [--rules a,b] [--container NAME] [--key=value ...]}
 * ({@code java -jar ingest-app.jar replay ...}): runs one {@link ReplayJob}, prints its report on stdout and returns
 * its exit code: 0 done, 1 writes did not all complete or the job failed, 2 bad arguments, 3 the topic no longer
 * retains the start of the range.
 */
public final class ReplayCommand {
    private static final Logger log = LoggerFactory.getLogger(ReplayCommand.class);

    private ReplayCommand() {}

    /** Runs the job; returns the exit code. Messages for a person go to stderr, the report to stdout. */
    public static int run(String[] args, Map<String, String> env) {
        if (Help.requested(args)) {
            System.out.print(Help.text(usage(), ReplaySettings.ALL)
                    + "\n" + Help.settings("ingest-app's settings, which apply to the replay too", IngestSettings.all()));
            return ReplayJob.EXIT_OK;
        }
        ReplaySettings settings;
        try {
            settings = ReplaySettings.load(args, env, Instant.now());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.err.println(usage());
            return ReplayJob.EXIT_USAGE;
        }
        try {
            ReplayReport report = new ReplayJob(settings).run();
            System.out.print(report.format());
            return report.exitCode();
        } catch (ReplayException e) {
            System.err.println("replay: " + e.getMessage());
            return e.exitCode();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.err.println("replay: interrupted; buckets already written stay (re-running is harmless)");
            return ReplayJob.EXIT_FAILED;
        } catch (RuntimeException e) {
            log.error("replay failed", e);
            System.err.println("replay failed: " + e + " (re-running is harmless)");
            return ReplayJob.EXIT_FAILED;
        }
    }

    static String usage() {
        return """
                Usage: ./tally replay --from TIME [--to TIME] [--rules a,b] [--container NAME] [--include-open-buckets]
                                      [--key=value ...]          (or: java -jar ingest-app.jar replay ...)
                  Rebuilds the buckets wholly inside the event-time range [from, to) from the retained input topic.
                  TIME: 2026-11-20T00:00:00Z, 2026-11-20T01:00:00+01:00 or 2026-11-20 (midnight UTC).
                  --to defaults to now minus ingest.late-bound.ms. Other settings: ingest-app's and replay.* (docs/replay.md).
                  Exit: 0 done, 1 writes incomplete or failure, 2 bad arguments, 3 range no longer retained by the topic.""";
    }
}
