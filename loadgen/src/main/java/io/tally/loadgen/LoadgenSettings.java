package io.tally.loadgen;

import io.tally.config.Config;
import io.tally.config.ConfigException;
import io.tally.config.Setting;
import io.tally.schemas.serde.RegistryClientSettings;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Everything loadgen needs, declared once ({@link #ALL}) and parsed once into typed fields. Every
 * {@code loadgen.*} key has a default that works against the local stack; {@code kafka.*} keys that
 * are not declared pass through to the producer.
 *
 * @param start       first event time of the generated spread, already resolved (the {@code auto} default
 *                    is "now minus the window, truncated to the hour", fixed once at load time)
 * @param ordersTopic where OrderEvents go; empty = none are produced (and a replay file holding some is refused)
 * @param ordersShare share of the generated records that go to {@link #ordersTopic} as OrderEvents
 */
public record LoadgenSettings(String bootstrapServers, RegistryClientSettings registryClient, String topic, Mode mode,
                              long events, Duration duration, long rate, int burstFactor, Duration burstStart,
                              Duration burstDuration, long seed, String domain, int customers, double zipfExponent,
                              int skus, int merchants, int postalCodes, BigDecimal amountMedian, double amountSigma,
                              Instant start, Duration window, Fractions fractions, double declinedFraction,
                              double refundedFraction, Duration futureSkew, Path rulesFile,
                              Optional<Path> groundTruthFile, Optional<Path> recordFile, Optional<Path> replayFile,
                              double replaySpeed, Duration progressInterval, int maxInFlight,
                              double v2FromFraction, Optional<String> ordersTopic, double ordersShare,
                              Map<String, String> kafkaOverrides) {

    /** What loadgen does: generate a synthetic stream, or replay a recorded one. */
    public enum Mode { GENERATE, REPLAY }

    /** Shares of the generated records that are deliberately wrong; the rest are valid events. */
    public record Fractions(double duplicate, double late, double future, double malformed, double invalid) {
        public static final Fractions NONE = new Fractions(0, 0, 0, 0, 0);

        public double total() {
            return duplicate + late + future + malformed + invalid;
        }
    }

    /** "none" switches an optional file off; the settings library does not allow empty values. */
    public static final String NONE = "none";

    public static final Setting<String> BOOTSTRAP = Setting.string("kafka.bootstrap.servers", "127.0.0.1:9092",
            "Kafka bootstrap servers.");
    public static final Setting<String> REGISTRY = Setting.string("schema.registry.url", "http://127.0.0.1:8085",
            "Confluent-API schema registry URL(s).");
    public static final Setting<String> TOPIC = Setting.string("loadgen.topic", "transactions", "Topic to produce to.");
    public static final Setting<String> MODE = Setting.string("loadgen.mode", "generate",
            "generate: a synthetic stream from the seed; replay: republish loadgen.replay-file.")
            .validate(v -> v.equals("generate") || v.equals("replay"), "must be generate or replay");
    public static final Setting<Long> EVENTS = Setting.longValue("loadgen.events", 10,
            "How many records to generate (valid, duplicate and broken ones together); ignored when "
                    + "loadgen.duration.ms is set.").atLeast(0);
    public static final Setting<Duration> DURATION = Setting.millis("loadgen.duration.ms", 0,
            "When > 0: generate for this long at loadgen.rate (plus the burst) instead of a fixed count.");
    public static final Setting<Long> RATE = Setting.longValue("loadgen.rate", 0,
            "Base rate in records/s; 0 = as fast as the broker acknowledges.").atLeast(0);
    public static final Setting<Integer> BURST_FACTOR = Setting.integer("loadgen.burst.factor", 1,
            "During the burst the rate is this multiple of loadgen.rate (1 = no burst).").atLeast(1);
    public static final Setting<Duration> BURST_START = Setting.millis("loadgen.burst.start.ms", 0,
            "When the burst starts, measured from the first record sent.");
    public static final Setting<Duration> BURST_DURATION = Setting.millis("loadgen.burst.duration.ms", 30_000,
            "How long the burst lasts.");
    public static final Setting<Long> SEED = Setting.longValue("loadgen.seed", 42,
            "Seed: the same seed, settings and start give byte-identical records.");
    public static final Setting<String> DOMAIN = Setting.string("loadgen.domain", "demo-shop", "Domain (tenant) of the events.");
    public static final Setting<Integer> CUSTOMERS = Setting.integer("loadgen.customers", 10_000,
            "Customer population; customers are drawn from a Zipf distribution over it (c-0 is the busiest).").atLeast(1);
    public static final Setting<String> ZIPF_EXPONENT = number("loadgen.zipf.exponent", "1.1",
            "Zipf exponent of the customer (and SKU) popularity; 0 = uniform.", 0, 10);
    public static final Setting<Integer> SKUS = Setting.integer("loadgen.skus", 500,
            "SKU population (Zipf, same exponent).").atLeast(1);
    public static final Setting<Integer> MERCHANTS = Setting.integer("loadgen.merchants", 50, "Merchant population (uniform).").atLeast(1);
    public static final Setting<Integer> POSTAL_CODES = Setting.integer("loadgen.postal-codes", 1_000,
            "Postal-code population (uniform; 10% of events carry none: digital goods).").atLeast(1);
    public static final Setting<String> AMOUNT_MEDIAN = number("loadgen.amount.median", "40.00",
            "Median amount; amounts are log-normal, rounded to cents, carried at scale 4.", 0.01, 1e9);
    public static final Setting<String> AMOUNT_SIGMA = number("loadgen.amount.sigma", "1.0",
            "Log-normal shape (standard deviation of ln(amount)).", 0, 5);
    public static final Setting<String> START = Setting.string("loadgen.start", "auto",
            "First event time of valid events (ISO-8601 instant, e.g. 2026-11-20T00:00:00Z); auto = now minus "
                    + "loadgen.window.ms, truncated to the hour.");
    public static final Setting<Duration> WINDOW = Setting.millis("loadgen.window.ms", 48 * 3_600_000L,
            "Valid events' times are spread uniformly over [start, start + window), so hour and day buckets fill; "
                    + "0 = all at start.");
    public static final Setting<String> DUPLICATE_FRACTION = fraction("loadgen.duplicate.fraction", "0.01",
            "Share of records that repeat an earlier valid event exactly (same transaction id, same bytes).");
    public static final Setting<String> LATE_FRACTION = fraction("loadgen.late.fraction", "0.001",
            "Share of records whose event time is older than every rule's retention (reason LATE).");
    public static final Setting<String> FUTURE_FRACTION = fraction("loadgen.future.fraction", "0.001",
            "Share of records whose event time is beyond loadgen.future-skew.ms ahead (reason FUTURE).");
    public static final Setting<String> MALFORMED_FRACTION = fraction("loadgen.malformed.fraction", "0.001",
            "Share of records that cannot be decoded: truncated or corrupt Avro after a valid header, an unknown "
                    + "schema id, or no wire-format header (reason DECODE_FAILED).");
    public static final Setting<String> INVALID_FRACTION = fraction("loadgen.invalid.fraction", "0.001",
            "Share of records that decode but miss a required value: empty transactionId, customerId or domain "
                    + "(reason INVALID).");
    public static final Setting<String> DECLINED_FRACTION = fraction("loadgen.declined.fraction", "0.04",
            "Share of events with status DECLINED (the rest of the non-refunded ones are APPROVED).");
    public static final Setting<String> REFUNDED_FRACTION = fraction("loadgen.refunded.fraction", "0.01",
            "Share of events with status REFUNDED.");
    public static final Setting<Duration> FUTURE_SKEW = Setting.millis("loadgen.future-skew.ms", 300_000,
            "How far an event time may be ahead of its record's timestamp before it is FUTURE; must match the "
                    + "pipeline's setting.");
    public static final Setting<String> RULES_FILE = Setting.string("loadgen.rules-file", "rules/default-rules.yaml",
            "Grade rules the ground truth is computed under; a relative path is looked up in the working "
                    + "directory, then its parents.");
    public static final Setting<String> GROUND_TRUTH_FILE = Setting.string("loadgen.ground-truth-file",
            ".tally/loadgen/ground-truth.json", "Where the run's ground truth (expected buckets and DLQ counts) "
                    + "is written (JSON); none = do not compute it.");
    public static final Setting<String> RECORD_FILE = Setting.string("loadgen.record-file", NONE,
            "Also write every decodable record sent to this Avro container file, for a later replay; none = off.");
    public static final Setting<String> REPLAY_FILE = Setting.string("loadgen.replay-file", NONE,
            "Replay mode: the Avro container file of TransactionEvents to republish (event times preserved); a "
                    + "recording made with loadgen.orders.share > 0 also holds OrderEvents, which go to loadgen.orders.topic.");
    public static final Setting<String> REPLAY_SPEED = number("loadgen.replay.speed", "1.0",
            "Replay pacing: 1.0 = the original event-time spacing, 2.0 = twice as fast, 0 = as fast as possible.", 0, 1e6);
    public static final Setting<Duration> PROGRESS_INTERVAL = Setting.millis("loadgen.progress.interval.ms", 5_000,
            "How often a progress line is logged when stderr is not a terminal (on a terminal it is redrawn "
                    + "twice a second).");
    public static final Setting<Integer> MAX_IN_FLIGHT = Setting.integer("loadgen.max-in-flight", 16_384,
            "Records sent but not yet acknowledged, at most (reactor-kafka maxInFlight): the memory bound.").atLeast(1);

    public static final Setting<String> V2_FROM_FRACTION = number("loadgen.schema.v2-from-fraction", "1",
            "From which point of the stream records are written with TransactionEvent schema version 2 "
                    + "(schemas/src/main/avro-v2: adds deviceId and loyaltyTier), as a share of the planned records: "
                    + "1 = never (all version 1), 0.5 = from the middle on, 0 = all version 2. The fields that count "
                    + "are the same in both versions, so the ground truth does not change.", 0, 1);

    public static final Setting<String> ORDERS_TOPIC = Setting.string("loadgen.orders.topic", NONE,
            "Topic of the second event schema, OrderEvent (schemas/src/main/avro/OrderEvent.avsc: nested, amount in "
                    + "cents, time as an ISO-8601 string; registered under <topic>-value); none = no orders. "
                    + "Must differ from loadgen.topic. In replay mode, where a recording's OrderEvents go.");
    public static final Setting<String> ORDERS_SHARE = fraction("loadgen.orders.share", "0",
            "Share of the generated records produced to loadgen.orders.topic as OrderEvents instead of "
                    + "TransactionEvents to loadgen.topic, every kind alike (a duplicate goes where its original "
                    + "went). Which records is fixed by the seed and does not change the events themselves, so the "
                    + "ground truth is the same at any share. Needs loadgen.orders.topic when above 0.");

    public static final List<Setting<?>> ALL = List.of(BOOTSTRAP, REGISTRY, RegistryClientSettings.USER_INFO, TOPIC, MODE, EVENTS, DURATION, RATE,
            BURST_FACTOR, BURST_START, BURST_DURATION, SEED, DOMAIN, CUSTOMERS, ZIPF_EXPONENT, SKUS, MERCHANTS,
            POSTAL_CODES, AMOUNT_MEDIAN, AMOUNT_SIGMA, START, WINDOW, DUPLICATE_FRACTION, LATE_FRACTION,
            FUTURE_FRACTION, MALFORMED_FRACTION, INVALID_FRACTION, DECLINED_FRACTION, REFUNDED_FRACTION,
            FUTURE_SKEW, RULES_FILE, GROUND_TRUTH_FILE, RECORD_FILE, REPLAY_FILE, REPLAY_SPEED, PROGRESS_INTERVAL,
            MAX_IN_FLIGHT, V2_FROM_FRACTION, ORDERS_TOPIC, ORDERS_SHARE);

    public static LoadgenSettings load(String[] args, Map<String, String> env) {
        return load(args, env, Instant.now());
    }

    /** As {@link #load(String[], Map)}, with the clock that resolves {@code loadgen.start=auto} given. */
    public static LoadgenSettings load(String[] args, Map<String, String> env, Instant now) {
        return from(Config.load(ALL, List.of("kafka."), args, env), now);
    }

    /** Typed values from an already loaded configuration; cross-field problems are reported together. */
    public static LoadgenSettings from(Config c, Instant now) {
        List<String> problems = new ArrayList<>();
        Map<String, String> overrides = c.withPrefix("kafka.");
        overrides.remove("bootstrap.servers");
        Duration window = c.get(WINDOW);
        Instant start = parseStart(c.get(START), now, window, problems);
        Fractions fractions = new Fractions(d(c, DUPLICATE_FRACTION), d(c, LATE_FRACTION), d(c, FUTURE_FRACTION),
                d(c, MALFORMED_FRACTION), d(c, INVALID_FRACTION));
        if (fractions.total() > 1.0) problems.add("the duplicate, late, future, malformed and invalid fractions add up to "
                + fractions.total() + ", more than 1");
        if (d(c, DECLINED_FRACTION) + d(c, REFUNDED_FRACTION) > 1.0) {
            problems.add("loadgen.declined.fraction + loadgen.refunded.fraction is more than 1");
        }
        Mode mode = Mode.valueOf(c.get(MODE).toUpperCase(Locale.ROOT));
        if (!c.get(DURATION).isZero() && c.get(RATE) == 0) {
            problems.add("loadgen.duration.ms needs a loadgen.rate > 0 (the count is rate x duration)");
        }
        if (c.get(BURST_FACTOR) > 1 && c.get(RATE) == 0) {
            problems.add("loadgen.burst.factor needs a loadgen.rate > 0 (a burst multiplies the base rate)");
        }
        Optional<Path> replay = optionalPath(c.get(REPLAY_FILE));
        if (mode == Mode.REPLAY && replay.isEmpty()) problems.add("loadgen.mode=replay needs loadgen.replay-file");
        Optional<String> ordersTopic = c.get(ORDERS_TOPIC).equalsIgnoreCase(NONE) ? Optional.empty() : Optional.of(c.get(ORDERS_TOPIC));
        if (d(c, ORDERS_SHARE) > 0 && ordersTopic.isEmpty()) {
            problems.add("loadgen.orders.share > 0 needs loadgen.orders.topic (where the OrderEvents go)");
        }
        if (ordersTopic.isPresent() && ordersTopic.get().equals(c.get(TOPIC))) {
            // One subject (<topic>-value) cannot hold both schemas: the registry refuses OrderEvent as an incompatible version.
            problems.add("loadgen.orders.topic must differ from loadgen.topic (" + c.get(TOPIC) + ")");
        }
        if (!problems.isEmpty()) throw new ConfigException(problems);
        return new LoadgenSettings(c.get(BOOTSTRAP), RegistryClientSettings.forUrls(c.get(REGISTRY), c.get(RegistryClientSettings.USER_INFO)),
                c.get(TOPIC), mode, c.get(EVENTS), c.get(DURATION),
                c.get(RATE), c.get(BURST_FACTOR), c.get(BURST_START), c.get(BURST_DURATION), c.get(SEED), c.get(DOMAIN),
                c.get(CUSTOMERS), d(c, ZIPF_EXPONENT), c.get(SKUS), c.get(MERCHANTS), c.get(POSTAL_CODES),
                new BigDecimal(c.get(AMOUNT_MEDIAN)), d(c, AMOUNT_SIGMA), start, window, fractions,
                d(c, DECLINED_FRACTION), d(c, REFUNDED_FRACTION), c.get(FUTURE_SKEW), Path.of(c.get(RULES_FILE)),
                optionalPath(c.get(GROUND_TRUTH_FILE)), optionalPath(c.get(RECORD_FILE)), replay,
                d(c, REPLAY_SPEED), c.get(PROGRESS_INTERVAL), c.get(MAX_IN_FLIGHT), d(c, V2_FROM_FRACTION), ordersTopic,
                d(c, ORDERS_SHARE), io.tally.schemas.KafkaSecrets.hiddenInPrint(overrides));
    }

    /** The topic that carries records of {@code d}. */
    public String topicOf(Destination d) {
        return switch (d) {
            case TRANSACTIONS -> topic;
            case ORDERS -> ordersTopic.orElseThrow(() -> new IllegalStateException("no loadgen.orders.topic for an OrderEvent"));
        };
    }

    /** The number of records a generate run sends: the fixed count, or what the rate schedule fits in the duration. */
    public long plannedRecords() {
        return duration.isZero() ? events : RateSchedule.of(this).recordsWithin(duration);
    }

    /** Sequence number of the first record written with schema version 2 ({@code planned} when none is). */
    public long firstV2Sequence(long planned) {
        return (long) Math.ceil(v2FromFraction * planned);
    }

    private static Instant parseStart(String raw, Instant now, Duration window, List<String> problems) {
        if (raw.equals("auto")) return now.minus(window).truncatedTo(ChronoUnit.HOURS);
        try {
            return Instant.parse(raw);
        } catch (DateTimeParseException e) {
            problems.add("loadgen.start: '" + raw + "' is neither auto nor an ISO-8601 instant like 2026-11-20T00:00:00Z");
            return now;
        }
    }

    private static Optional<Path> optionalPath(String raw) {
        return raw.equalsIgnoreCase(NONE) ? Optional.empty() : Optional.of(Path.of(raw));
    }

    private static double d(Config c, Setting<String> s) {
        return Double.parseDouble(c.get(s));
    }

    private static Setting<String> fraction(String key, String defaultValue, String doc) {
        return number(key, defaultValue, doc + " Between 0 and 1.", 0, 1);
    }

    /** A decimal number setting; the config library has no floating-point type, so it is a validated string. */
    private static Setting<String> number(String key, String defaultValue, String doc, double min, double max) {
        return Setting.string(key, defaultValue, doc).validate(v -> {
            try {
                double x = Double.parseDouble(v);
                return x >= min && x <= max;
            } catch (NumberFormatException e) {
                return false;
            }
        }, "must be a number from " + min + " to " + max);
    }
}
