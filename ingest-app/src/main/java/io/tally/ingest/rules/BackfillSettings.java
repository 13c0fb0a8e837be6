package io.tally.ingest.rules;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Setting;
import io.tally.ingest.app.IngestSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@code ./tally rules backfill} reads: its own {@code backfill.*} settings plus every ingest-app setting (Kafka,
 * registry, topics, sources file, validation bounds, Cosmos, the application id whose stage 5 it feeds), so it judges
 * events exactly as the live run does.
 */
public record BackfillSettings(IngestSettings ingest, double recordsPerSecond, Duration liveLagBound, Duration endMargin,
                               Duration progressInterval) {
    public static final Setting<Integer> RATE = Setting.integer("backfill.max-records-per-second", 5000,
            "Input records per second the backfill reads at most (0: no limit, and no backfill.live-first.max-lag.ms either). Its "
                    + "deltas share stage 5, the sink and its request units with the live run, whose updates wait behind them: "
                    + "live first.").atLeast(0);
    public static final Setting<Duration> LIVE_LAG = Setting.millis("backfill.live-first.max-lag.ms", 500,
            "Live first: while the live aggregation is further behind on the input than this (records between its committed "
                    + "offsets and the ends, over the input's rate), the backfill halves its reading rate, and otherwise grows it "
                    + "back towards backfill.max-records-per-second (it starts at a quarter of that, never goes below a "
                    + "thirty-second). The backfill shares the broker, stage 5, the sink and maybe the cores with the live run. 0: "
                    + "always backfill.max-records-per-second.").validate(d -> !d.isNegative(), "must be >= 0");
    public static final Setting<Duration> END_MARGIN = Setting.millis("backfill.end-margin.ms", 60_000,
            "The backfill reads each input partition to its end as of this long after the seam: a record stamped before the "
                    + "seam (by its producer) that reaches the broker later than that is counted by neither side.")
            .validate(d -> !d.isNegative(), "must be >= 0");
    public static final Setting<Duration> PROGRESS = Setting.millis("backfill.progress-interval.ms", 5000,
            "How often the progress line (records, %, rate) is written to stderr.").validate(d -> !d.isZero(), "must be > 0");

    public static final List<Setting<?>> ALL = List.of(RATE, LIVE_LAG, END_MARGIN, PROGRESS);

    public static BackfillSettings load(List<String> flags, Map<String, String> env) {
        List<String> own = new ArrayList<>();
        List<String> ingestFlags = new ArrayList<>();
        for (String f : flags) (f.startsWith("--backfill.") ? own : ingestFlags).add(f);
        List<String> problems = new ArrayList<>();
        Config c = null;
        IngestSettings ingest = null;
        try {
            c = Config.load(ALL, List.of(), own.toArray(String[]::new), env);
        } catch (ConfigException e) {
            problems.addAll(e.problems());
        }
        try {
            ingest = IngestSettings.load(ingestFlags.toArray(String[]::new), env);
        } catch (ConfigException e) {
            problems.addAll(e.problems());
        }
        if (!problems.isEmpty()) throw new ConfigException(problems);
        return new BackfillSettings(ingest, c.get(RATE), c.get(LIVE_LAG), c.get(END_MARGIN), c.get(PROGRESS));
    }
}
