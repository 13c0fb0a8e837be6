package io.tally.loadgen.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.tally.loadgen.truth.GroundTruthFile;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The last step of {@code ./tally demo}: three example queries on read-service, each printed as a curl
 * command the reader can paste, with read-service's answer, and checked against loadgen's ground truth
 * for the busiest customer of the run. local/demo.sh runs it from the loadgen jar once the pipeline
 * has drained.
 *
 * <pre>
 * java -cp loadgen.jar io.tally.loadgen.demo.DemoQueries --truth=FILE --read-url=URL [--show-read-url=URL] [--customer=c-0]
 * </pre>
 *
 * Exit code 0 when read-service agrees with the ground truth on every query, 1 when it differs, 2 when
 * the queries could not be asked (arguments, a ground-truth file without the customer's buckets).
 */
public final class DemoQueries {
    static final int AGREES = 0, DIFFERS = 1, CANNOT_CHECK = 2;
    private static final String GRADE = "spend-per-customer";
    private static final String UNIT = "hour";
    private static final String USAGE = "usage: DemoQueries --truth=FILE --read-url=URL [--show-read-url=URL] [--customer=ID]";
    private static final DateTimeFormatter HOUR = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:00'Z'").withZone(ZoneOffset.UTC);
    private static final Duration QUERY_TIMEOUT = Duration.ofSeconds(5);
    /** The sink may still be a flush or two behind on the busiest bucket right after the pipeline drained. */
    private static final Duration SETTLE = Duration.ofSeconds(10);

    /**
     * @param showReadUrl the read-service address printed in the curl commands: in Docker, the host's
     *     published port rather than the one this process reaches
     */
    record Options(Path truth, URI readUrl, String showReadUrl, String customer) {
        static Options parse(String[] args) {
            Map<String, String> given = DemoArgs.parse(args, List.of("--truth", "--read-url", "--show-read-url", "--customer"));
            String truth = given.get("--truth"), read = given.get("--read-url");
            if (truth == null || read == null) throw new IllegalArgumentException("--truth and --read-url are required");
            return new Options(Path.of(truth), URI.create(read), given.getOrDefault("--show-read-url", read),
                    given.getOrDefault("--customer", "c-0"));
        }
    }

    private final Options options;
    private final GroundTruthFile truth;
    private final ReadServiceClient read;
    private final PrintStream out;
    private final Clock clock;
    private final Duration settle;
    private final String pk;
    private final String pkUrl;
    private boolean differs;

    DemoQueries(Options options, GroundTruthFile truth, PrintStream out, Clock clock, Duration settle) {
        this.options = options;
        this.truth = truth;
        this.read = new ReadServiceClient(options.readUrl());
        this.out = out;
        this.clock = clock;
        this.settle = settle;
        String domain = truth.domain().orElseThrow(() -> new IllegalArgumentException(
                "the ground truth names no domain (a replayed run?); the demo's queries need a generated one"));
        this.pk = domain + "|" + options.customer();
        this.pkUrl = URLEncoder.encode(pk, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws InterruptedException {
        System.exit(run(args, System.out, System.err, Clock.systemUTC(), SETTLE));
    }

    static int run(String[] args, PrintStream out, PrintStream err, Clock clock, Duration settle) throws InterruptedException {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("demo queries: " + e.getMessage());
            err.println(USAGE);
            return CANNOT_CHECK;
        }
        try {
            return new DemoQueries(options, GroundTruthFile.read(options.truth()), out, clock, settle).run();
        } catch (IllegalArgumentException | IOException e) {
            err.println("demo queries: " + e.getMessage());
            return CANNOT_CHECK;
        }
    }

    int run() throws InterruptedException {
        List<Long> hours = truth.bucketIndexes(pk, GRADE, UNIT);
        if (hours.isEmpty()) {
            throw new IllegalArgumentException("the ground truth has no " + GRADE + " " + UNIT + " bucket of "
                    + options.customer() + " (" + options.truth() + ")");
        }
        out.println();
        out.println("==> example queries (copy them; read-service answers them as long as it runs)");
        pointRead(hours.get(hours.size() - 1));
        Instant start = truth.start().orElseGet(() -> Instant.ofEpochSecond(hours.get(0) * 3600));
        rangeQuery(hours, start);
        rollUp(hours, start);
        out.println();
        out.println("more: curl -s '" + options.showReadUrl() + "/v1/features/" + pkUrl + "' (every grade's current bucket), docs/read-api.md");
        return differs ? DIFFERS : AGREES;
    }

    private void pointRead(long hour) throws InterruptedException {
        GroundTruthFile.Bucket expected = expected(hour).orElseThrow();
        out.println();
        out.println("1. point read: " + options.customer() + "'s spend in hour bucket " + hour + " ("
                + HOUR.format(Instant.ofEpochSecond(hour * 3600)) + "),");
        out.println("   compared with loadgen's ground truth");
        String path = "/v1/buckets/" + pkUrl + "/" + URLEncoder.encode(id(hour), StandardCharsets.UTF_8);
        Instant deadline = clock.instant().plus(settle);
        while (!same(read.get(path, Duration.ofSeconds(2)).number("sum").orElse(null), expected.sum())
                && clock.instant().isBefore(deadline)) {
            Thread.sleep(500);
        }
        ReadServiceClient.Answer answer = show(path, 20);
        BigDecimal sum = answer.number("sum").orElse(null), count = answer.number("count").orElse(null);
        String truthText = String.format("  ground truth: sum %s, count %s, min %s, max %s: ", text(expected.sum()),
                text(expected.count()), text(expected.min()), text(expected.max()));
        if (same(sum, expected.sum()) && same(count, expected.count())) {
            out.println(truthText + "read-service agrees");
        } else {
            out.println(truthText + "read-service DIFFERS (sum " + answered(sum) + ", count " + answered(count) + ")");
            differs = true;
        }
    }

    private void rangeQuery(List<Long> hours, Instant start) throws InterruptedException {
        out.println();
        out.println("2. range query inside " + options.customer() + "'s partition: its hour buckets since " + start
                + " (one query, oldest first)");
        ReadServiceClient.Answer answer = show("/v1/buckets/" + pkUrl + "?grade=" + GRADE + "&unit=" + UNIT + "&from=" + start, 16);
        out.println("  each bucket of the answer against the ground truth:");
        int found = 0;
        for (JsonNode b : answer.json().map(j -> j.path("buckets")).orElse(MissingNode.getInstance())) {
            found++;
            String id = b.path("id").asText();
            Optional<GroundTruthFile.Bucket> expected = truth.bucket(pk, id);
            BigDecimal sum = b.path("sum").isNumber() ? b.path("sum").decimalValue() : null;
            BigDecimal count = b.path("count").isNumber() ? b.path("count").decimalValue() : null;
            String verdict;
            if (expected.isPresent() && same(sum, expected.get().sum()) && same(count, expected.get().count())) {
                verdict = "agrees";
            } else {
                verdict = "DIFFERS (ground truth: " + expected.map(e -> "sum " + text(e.sum()) + ", count " + text(e.count()))
                        .orElse("no such bucket") + ")";
                differs = true;
            }
            out.printf("    %s  sum %s  count %s  %s%n", ReadServiceClient.plain(b.get("bucket")), answered(sum), answered(count), verdict);
        }
        if (found != hours.size()) {
            out.printf("    %d buckets in the answer, %d in the ground truth%n", found, hours.size());
            differs = true;
        }
    }

    private void rollUp(List<Long> hours, Instant start) throws InterruptedException {
        long last = Math.floorDiv(clock.instant().getEpochSecond(), 3600) - Math.floorDiv(start.getEpochSecond(), 3600) + 1;
        out.println();
        out.println("3. roll-up: " + options.customer() + "'s spend over the last " + last
                + " hours (the current one included), summed by read-service");
        ReadServiceClient.Answer answer = show("/v1/rollups/" + pkUrl + "?grade=" + GRADE + "&unit=" + UNIT + "&last=" + last, 20);
        BigDecimal total = hours.stream().map(h -> expected(h).map(GroundTruthFile.Bucket::sum).orElse(BigDecimal.ZERO))
                .reduce(BigDecimal.ZERO, BigDecimal::add);
        BigDecimal sum = answer.number("sum").orElse(null);
        String truthText = "  ground truth: " + text(total) + " over " + hours.size() + " hour buckets: ";
        if (same(sum, total)) {
            out.println(truthText + "read-service agrees");
        } else {
            out.println(truthText + "read-service DIFFERS (" + answered(sum) + ")");
            differs = true;
        }
    }

    /** Prints the curl command for {@code path}, then read-service's answer to it, cut to {@code maxLines}. */
    private ReadServiceClient.Answer show(String path, int maxLines) throws InterruptedException {
        out.println();
        out.println("  $ curl -s '" + options.showReadUrl() + path + "'");
        ReadServiceClient.Answer answer = read.get(path, QUERY_TIMEOUT);
        List<String> lines = answer.pretty().lines().toList();
        lines.stream().limit(maxLines).forEach(l -> out.println("  " + l));
        if (lines.size() > maxLines) out.printf("    ... (%d more lines)%n", lines.size() - maxLines);
        return answer;
    }

    private Optional<GroundTruthFile.Bucket> expected(long hour) {
        return truth.bucket(pk, id(hour));
    }

    private static String id(long hour) {
        return GRADE + "|" + UNIT + "|" + hour;
    }

    /** Equal as numbers: 12.5 and 12.50 are the same sum. */
    private static boolean same(BigDecimal a, BigDecimal b) {
        return a != null && b != null && a.compareTo(b) == 0;
    }

    /** A ground-truth value; "-" for an aggregation the rule does not list. */
    private static String text(BigDecimal v) {
        return Objects.toString(v == null ? null : v.toPlainString(), "-");
    }

    /** A value read-service answered; "?" where it gave none. */
    private static String answered(BigDecimal v) {
        return Objects.toString(v == null ? null : v.toPlainString(), "?");
    }
}
