package io.tally.ingest.rules;

import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.ingest.app.IngestSettings;
import io.tally.rules.RulesException;
import java.io.PrintStream;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code ./tally rules backfill}: fills the history of the grades the last rules change added or changed ({@link BackfillJob}). */
public final class BackfillCommand {
    private static final Logger log = LoggerFactory.getLogger(BackfillCommand.class);

    public static final String USAGE = """
            Usage: ./tally rules backfill [--key=value ...]

            Counts the history of the grades the last ./tally rules apply added or changed: every retained input record
            from its partition's start up to the seam (as of backfill.end-margin.ms after it), through the same checks
            and dedupe as the live run, on the history side of the seam only. The counts reach the live entity documents
            through the live aggregation's stage 5 (it must be running the applied rules), added to what the live run
            counted since the seam, so nothing is counted twice and no live update is lost. It reads at most
            backfill.max-records-per-second, waits for the seam when started earlier, prints progress, and marks the
            grades complete in the rules record at the end: read-service then answers their older buckets as complete.
            Killed, run it again: it resumes (exactly-once). Run again after it completed: nothing to do.
            Exit status: 0 done or nothing pending, 2 bad settings or the live aggregation never started, 4 the rules
            changed while it ran, 1 anything else (see the log).
            """;

    private BackfillCommand() {}

    public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (Help.requested(args)) {
            out.print(Help.text(USAGE, BackfillSettings.ALL) + "\n" + Help.settings("ingest-app's settings, which apply to the backfill too",
                    IngestSettings.all()));
            return BackfillJob.EXIT_DONE;
        }
        BackfillSettings settings;
        try {
            settings = BackfillSettings.load(Arrays.asList(args), env);
        } catch (ConfigException e) {
            err.println(e.getMessage());
            return BackfillJob.EXIT_USAGE;
        }
        try {
            new BackfillJob(settings, out, Clock.systemUTC()).run();
            return BackfillJob.EXIT_DONE;
        } catch (BackfillJob.BackfillException e) {
            err.println(e.getMessage());
            return e.exit();
        } catch (RulesException e) {
            err.println(e.getMessage());
            return BackfillJob.EXIT_USAGE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (RuntimeException e) {
            log.error("backfill failed", e);
            return 1;
        }
    }
}
