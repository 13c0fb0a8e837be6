package io.tally.ingest.replay;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Setting;
import io.tally.ingest.app.IngestSettings;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@code ./tally replay} reads: its own {@code replay.*} settings plus every ingest-app setting
 * (Kafka, registry, topics prefix, rules file, validation bounds, Cosmos, the sink's write tuning),
 * so a replay judges and writes events exactly as the live run does.
 *
 * <p>Short flags: {@code --from}, {@code --to}, {@code --rules}, {@code --include-open-buckets} and
 * {@code --application-id} stand for their {@code replay.*} keys; {@code --container NAME} stands for
 * {@code --cosmos.container=NAME} (the container is created when missing, as at every start).
 *
 * @param rules          rule names to rebuild; empty = every rule
 * @param applicationId  the consumer's group.id and client.id, naming the job in the broker's logs and quotas
 * @param writeTimeout   how long the writes may take to become durable before the job gives up
 */
public record ReplaySettings(IngestSettings ingest, ReplayRange range, Set<String> rules, String applicationId,
                             Duration progressInterval, Duration writeTimeout) {

    public static final Setting<String> FROM = Setting.string("replay.from", null,
            "Start of the event-time range to rebuild (inclusive): an ISO instant (2026-11-20T00:00:00Z), a date-time with "
                    + "offset, or a date (midnight UTC).").required();
    public static final Setting<String> TO = Setting.string("replay.to", "auto",
            "End of the range (exclusive), same forms; auto = now minus ingest.late-bound.ms, so buckets late events can "
                    + "still change are not rebuilt.");
    public static final Setting<String> RULES = Setting.string("replay.rules", "all",
            "Comma-separated rule names to rebuild (all = every rule of ingest.rules.file).");
    public static final Setting<Boolean> INCLUDE_OPEN = Setting.bool("replay.include-open-buckets", false,
            "Allow a --to later than now minus ingest.late-bound.ms: buckets that late events can still change are rebuilt "
                    + "as of the records present at the start.");
    public static final Setting<String> APPLICATION_ID = Setting.string("replay.application-id", "auto",
            "group.id and client.id of the replay's consumer (it commits nothing); auto = tally-replay-<from>-<to>.");
    public static final Setting<Duration> PROGRESS_INTERVAL = Setting.millis("replay.progress-interval.ms", 2000,
            "How often the progress line (records, %, rate, ETA) is written to stderr.");
    public static final Setting<Duration> WRITE_TIMEOUT = Setting.millis("replay.write-timeout.ms", 600_000,
            "How long the job waits for its writes to become durable (failing writes keep being retried meanwhile) before "
                    + "it stops and exits non-zero.");

    public static final List<Setting<?>> ALL = List.of(FROM, TO, RULES, INCLUDE_OPEN, APPLICATION_ID, PROGRESS_INTERVAL, WRITE_TIMEOUT);

    private static final Map<String, String> SHORT_FLAGS = Map.of("from", FROM.key(), "to", TO.key(), "rules", RULES.key(),
            "include-open-buckets", INCLUDE_OPEN.key(), "application-id", APPLICATION_ID.key(), "container", "cosmos.container");
    private static final DateTimeFormatter COMPACT = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    /** Loads the settings; {@code now} decides the default {@code --to} and what counts as the future. */
    public static ReplaySettings load(String[] args, Map<String, String> env, Instant now) {
        List<String> replayArgs = new ArrayList<>();
        List<String> ingestArgs = new ArrayList<>();
        split(args, replayArgs, ingestArgs);
        List<String> problems = new ArrayList<>();
        Config c = null;
        IngestSettings ingest = null;
        try {
            c = Config.load(ALL, List.of(), replayArgs.toArray(String[]::new), env);
        } catch (ConfigException e) {
            problems.addAll(e.problems());
        }
        try {
            ingest = IngestSettings.load(ingestArgs.toArray(String[]::new), env);
        } catch (ConfigException e) {
            problems.addAll(e.problems());
        }
        if (!problems.isEmpty()) throw new ConfigException(problems);
        try {
            Duration lateBound = ingest.aggregation().topology().lateBound();
            Instant from = ReplayRange.parseTime("from", c.get(FROM));
            Instant to = c.get(TO).equals("auto") ? ReplayRange.settledBefore(now, lateBound) : ReplayRange.parseTime("to", c.get(TO));
            ReplayRange range = ReplayRange.of(from, to, now, lateBound, c.get(INCLUDE_OPEN));
            String appId = c.get(APPLICATION_ID).equals("auto")
                    ? "tally-replay-" + COMPACT.format(range.from()) + "-" + COMPACT.format(range.to()) : c.get(APPLICATION_ID);
            return new ReplaySettings(ingest, range, ruleNames(c.get(RULES)), appId, c.get(PROGRESS_INTERVAL), c.get(WRITE_TIMEOUT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(List.of(e.getMessage()));
        }
    }

    static Set<String> ruleNames(String raw) {
        if (raw.trim().equals("all")) return Set.of();
        Set<String> names = new LinkedHashSet<>();
        Arrays.stream(raw.split(",")).map(String::trim).filter(s -> !s.isEmpty()).forEach(names::add);
        return Set.copyOf(names);
    }

    /**
     * Sends {@code replay.*} keys (and their short forms) to {@code replay}, everything else to {@code ingest},
     * each flag as one {@code --key=value} token; a bare flag is a boolean {@code true}.
     */
    static void split(String[] args, List<String> replay, List<String> ingest) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || a.length() == 2) {
                ingest.add(a); // the ingest settings loader reports it
                continue;
            }
            int eq = a.indexOf('=');
            String key = eq > 0 ? a.substring(2, eq) : a.substring(2);
            String value;
            if (eq > 0) value = a.substring(eq + 1);
            else if (i + 1 < args.length && !args[i + 1].startsWith("--")) value = args[++i];
            else value = "true";
            key = SHORT_FLAGS.getOrDefault(key, key);
            (key.startsWith("replay.") ? replay : ingest).add("--" + key + "=" + value);
        }
    }
}
