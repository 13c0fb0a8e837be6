package io.tally.loadgen;

import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.loadgen.truth.GroundTruth;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code ./tally loadgen [--key=value...]}: parses settings, runs {@link Loadgen}, prints the summary on
 * stdout. Exit status: 0 when every record was acknowledged, 1 when any was not (the count is printed)
 * or the run could not start, 2 for invalid settings.
 */
public final class LoadgenMain {
    private static final Logger log = LoggerFactory.getLogger(LoadgenMain.class);
    /** The summary lists at most this many customer totals; the ground-truth file has everything. */
    private static final int CUSTOMERS_SHOWN = 10;

    private LoadgenMain() {}

    public static void main(String[] args) {
        if (Help.requested(args)) {
            System.out.print(help());
            return;
        }
        LoadgenSettings settings;
        try {
            settings = LoadgenSettings.load(args, System.getenv());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.err.println("(./tally loadgen --help lists every setting)");
            System.exit(2);
            return;
        }
        Loadgen.Summary summary;
        try {
            summary = Loadgen.run(settings);
        } catch (Exception e) {
            log.error("loadgen failed: {}", e.toString(), e);
            System.exit(1);
            return;
        }
        print(summary, System.out);
        if (summary.failed() > 0) {
            System.err.printf(Locale.ROOT, "loadgen: %,d of %,d planned records were NOT acknowledged by Kafka%s%n",
                    summary.failed(), summary.planned(), summary.aborted().map(a -> " (sending stopped early: " + a + ")").orElse(""));
            System.exit(1);
        }
    }

    static final String USAGE = """
                Usage: ./tally loadgen [--key=value ...]

                Produces TransactionEvents to Kafka (Avro, Confluent wire format), and with loadgen.orders.share
                a share of the events as OrderEvents to loadgen.orders.topic, and writes the run's ground truth:
                the bucket values the pipeline must reach under the rules file, and the expected DLQ records by
                reason.

                  generate (default)  a synthetic stream from loadgen.seed; add --loadgen.record-file=F to
                                      keep a copy for replay
                  replay              --loadgen.mode=replay --loadgen.replay-file=F [--loadgen.replay.speed=1.0]

                Examples:
                  ./tally loadgen --loadgen.events=100000 --loadgen.rate=5000
                  ./tally loadgen --loadgen.rate=1000 --loadgen.duration.ms=120000 \\
                      --loadgen.burst.factor=10 --loadgen.burst.start.ms=60000 --loadgen.burst.duration.ms=30000
                  ./tally loadgen --loadgen.events=1000000 --loadgen.record-file=run.avro
                  ./tally loadgen --loadgen.orders.topic=orders --loadgen.orders.share=0.5   # half as OrderEvents
                  ./tally loadgen --loadgen.mode=replay --loadgen.replay-file=run.avro --loadgen.replay.speed=0

                kafka.* keys not listed pass through to the producer (idempotence and acks=all are fixed).
                """;

    static String help() {
        return Help.text(USAGE, LoadgenSettings.ALL);
    }

    static void print(Loadgen.Summary s, PrintStream out) {
        out.printf(Locale.ROOT, "loadgen: %,d records acknowledged of %,d planned, %,d failed, in %.1f s (%,.0f rec/s)%n",
                s.acknowledged(), s.planned(), s.failed(), s.elapsed().toNanos() / 1e9, s.ratePerSecond());
        StringBuilder kinds = new StringBuilder();
        s.acknowledgedByKind().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> kinds.append(' ').append(e.getKey()).append(' ').append(e.getValue()));
        out.println("  by kind:" + kinds);
        if (s.acknowledgedByTopic().size() > 1) {
            StringBuilder topics = new StringBuilder();
            s.acknowledgedByTopic().forEach((topic, n) -> topics.append(' ').append(topic).append(' ').append(n));
            out.println("  by topic:" + topics);
        }
        if (s.mode() == LoadgenSettings.Mode.GENERATE) {
            out.printf("  event times from %s (hour bucket %d) over %s%n", s.start(), Math.floorDiv(s.start().getEpochSecond(), 3600),
                    s.window());
        }
        if (s.recorded() > 0) out.printf(Locale.ROOT, "  recorded %,d events for replay%n", s.recorded());
        if (s.truth().isPresent()) {
            GroundTruth t = s.truth().get();
            Map<String, Long> dlq = t.expectedDlq();
            out.printf(Locale.ROOT, "  expected: %,d events counted, %,d duplicates, %,d bucket documents, DLQ %,d "
                            + "(DECODE_FAILED %d, INVALID %d, LATE %d, FUTURE %d)%n",
                    t.accepted(), t.duplicates(), t.documents(), t.expectedDlqTotal(), dlq.get(GroundTruth.DECODE_FAILED),
                    dlq.get(GroundTruth.INVALID), dlq.get(GroundTruth.LATE), dlq.get(GroundTruth.FUTURE));
            out.println("  ground truth: " + s.groundTruthFile().orElseThrow());
            Map<String, BigDecimal> spend = s.spendByCustomer();
            out.printf("  amount per customer (counted events, every status; %d of %d customers):%n",
                    Math.min(CUSTOMERS_SHOWN, spend.size()), spend.size());
            spend.entrySet().stream().limit(CUSTOMERS_SHOWN)
                    .forEach(e -> out.printf("  %s spent %s%n", e.getKey(), e.getValue().toPlainString()));
        }
    }
}
