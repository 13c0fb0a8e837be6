package io.tally.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Fixed seeds throughout: every assertion is about one known sequence, so none of them can flake. */
class EventGeneratorTest {
    static final Instant NOW = Instant.parse("2026-11-21T12:34:56Z");
    static final Duration LATE_BOUND = Duration.ofDays(35);

    static LoadgenSettings settings(String... flags) {
        return LoadgenSettings.load(flags, Map.of(), NOW);
    }

    static List<OutgoingRecord> generate(LoadgenSettings s) {
        List<OutgoingRecord> out = new ArrayList<>();
        new EventGenerator(s, LATE_BOUND).forEachRemaining(out::add);
        return out;
    }

    @Test
    void sameSeedGivesByteIdenticalEvents() throws Exception {
        LoadgenSettings s = settings("--loadgen.events=5000", "--loadgen.seed=7", "--loadgen.duplicate.fraction=0.05",
                "--loadgen.malformed.fraction=0.05", "--loadgen.invalid.fraction=0.05");
        List<OutgoingRecord> a = generate(s), b = generate(s);
        assertThat(a).hasSize(5000);
        for (int i = 0; i < a.size(); i++) {
            assertThat(a.get(i).kind()).isEqualTo(b.get(i).kind());
            assertThat(a.get(i).malformation()).isEqualTo(b.get(i).malformation());
            assertThat(bytes(a.get(i).event())).as("record %d", i).isEqualTo(bytes(b.get(i).event()));
        }
        List<OutgoingRecord> other = generate(settings("--loadgen.events=5000", "--loadgen.seed=8"));
        assertThat(bytes(other.get(0).event())).isNotEqualTo(bytes(a.get(0).event()));
    }

    @Test
    void customersFollowZipf() {
        LoadgenSettings s = settings("--loadgen.events=100000", "--loadgen.customers=1000", "--loadgen.zipf.exponent=1.1",
                "--loadgen.invalid.fraction=0"); // an invalid record may have an empty customer id
        Map<String, Integer> counts = new HashMap<>();
        generate(s).forEach(r -> counts.merge(r.event().getCustomerId(), 1, Integer::sum));
        double h = 0;
        for (int k = 1; k <= 1000; k++) h += 1 / Math.pow(k, 1.1);
        // P(rank k) = k^-s / H(n, s): c-0 ~ 17.6%, c-9 ~ 1.4% of 100k records.
        assertThat(counts.get("c-0") / 100_000.0).isCloseTo(1 / h, within(0.01));
        assertThat(counts.get("c-9") / 100_000.0).isCloseTo(Math.pow(10, -1.1) / h, within(0.003));
        assertThat(counts.get("c-0")).isGreaterThan(counts.get("c-1")).isGreaterThan(counts.get("c-9"));
        assertThat(counts.keySet()).allMatch(c -> Integer.parseInt(c.substring(2)) < 1000);
    }

    @Test
    void amountsAreLogNormalCents() {
        LoadgenSettings s = settings("--loadgen.events=50000", "--loadgen.amount.median=40.00", "--loadgen.amount.sigma=1.0");
        List<BigDecimal> amounts = generate(s).stream().map(r -> r.event().getAmount()).sorted().toList();
        BigDecimal median = amounts.get(amounts.size() / 2);
        assertThat(median.doubleValue()).isBetween(38.0, 42.0);
        // One sigma above the median: e^(mu + 1) = 40e ~ 108.73; 15.9% of a log-normal lies beyond it.
        long above = amounts.stream().filter(a -> a.doubleValue() > 40 * Math.E).count();
        assertThat(above / 50_000.0).isCloseTo(0.1587, within(0.01));
        assertThat(amounts).allSatisfy(a -> {
            assertThat(a.scale()).isEqualTo(4);
            assertThat(a.remainder(new BigDecimal("0.01")).signum()).isZero(); // whole cents
            assertThat(a).isGreaterThanOrEqualTo(new BigDecimal("0.01"));
        });
    }

    @Test
    void anomalyFractionsAndTimesAreAsConfigured() {
        LoadgenSettings s = settings("--loadgen.events=100000", "--loadgen.duplicate.fraction=0.05",
                "--loadgen.late.fraction=0.02", "--loadgen.future.fraction=0.02", "--loadgen.malformed.fraction=0.02",
                "--loadgen.invalid.fraction=0.02", "--loadgen.declined.fraction=0.1", "--loadgen.refunded.fraction=0.05");
        List<OutgoingRecord> records = generate(s);
        Map<RecordKind, Integer> kinds = new EnumMap<>(RecordKind.class);
        records.forEach(r -> kinds.merge(r.kind(), 1, Integer::sum));
        // Binomial standard deviation at n=100k, p=0.02 is ~44: +-300 is about 7 sigma.
        assertThat(kinds.get(RecordKind.DUPLICATE)).isBetween(4_500, 5_500);
        for (RecordKind k : List.of(RecordKind.LATE, RecordKind.FUTURE, RecordKind.MALFORMED, RecordKind.INVALID)) {
            assertThat(kinds.get(k)).as(k.name()).isBetween(1_700, 2_300);
        }
        Instant start = s.start();
        assertThat(start).isEqualTo(Instant.parse("2026-11-19T12:00:00Z")); // auto: now - 48 h, to the hour
        Map<String, TransactionEvent> valid = new HashMap<>();
        long declined = 0;
        for (OutgoingRecord r : records) {
            Instant t = r.event().getEventTime();
            switch (r.kind()) {
                case VALID -> {
                    assertThat(t).isBetween(start, start.plus(s.window()).minusMillis(1));
                    valid.put(r.event().getTransactionId(), r.event());
                    if (r.event().getStatus().equals("DECLINED")) declined++;
                }
                case DUPLICATE -> assertThat(valid.get(r.event().getTransactionId())).as("repeats an earlier valid event")
                        .isEqualTo(r.event());
                case LATE -> assertThat(t).isBefore(start.minus(LATE_BOUND).minus(Duration.ofDays(1)).plusMillis(1));
                case FUTURE -> assertThat(t).isAfter(start.plus(s.window()).plus(s.futureSkew()).plus(Duration.ofDays(1)).minusMillis(1));
                case INVALID -> assertThat(List.of(r.event().getTransactionId(), r.event().getCustomerId(), r.event().getDomain()))
                        .contains("");
                case MALFORMED -> assertThat(r.malformation()).isNotNull();
                default -> throw new AssertionError(r.kind());
            }
        }
        assertThat(declined / (double) valid.size()).isCloseTo(0.10, within(0.01));
        long nullEmails = records.stream().filter(r -> r.kind() == RecordKind.VALID && r.event().getEmail() == null).count();
        assertThat(nullEmails / (double) valid.size()).isCloseTo(EventGenerator.EMAIL_NULL_SHARE, within(0.01));
        assertThat(records).filteredOn(r -> r.kind() != RecordKind.INVALID && r.event().getEmail() != null)
                .allMatch(r -> r.event().getEmail().equals(r.event().getCustomerId() + "@example.com"));
    }

    @Test
    void durationRunsSendRateTimesDurationPlusTheBurst() {
        LoadgenSettings s = settings("--loadgen.rate=100", "--loadgen.duration.ms=60000", "--loadgen.burst.factor=10",
                "--loadgen.burst.start.ms=20000", "--loadgen.burst.duration.ms=10000");
        // 100/s for 50 s + 1000/s for 10 s.
        assertThat(new EventGenerator(s, LATE_BOUND).total()).isEqualTo(100 * 50 + 1000 * 10);
    }

    static byte[] bytes(TransactionEvent e) throws Exception {
        ByteBuffer b = e.toByteBuffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
