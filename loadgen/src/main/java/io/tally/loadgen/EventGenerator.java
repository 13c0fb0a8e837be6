package io.tally.loadgen;

import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.commons.rng.UniformRandomProvider;
import org.apache.commons.rng.sampling.distribution.ContinuousSampler;
import org.apache.commons.rng.sampling.distribution.LogNormalSampler;
import org.apache.commons.rng.sampling.distribution.ZigguratSampler;
import org.apache.commons.rng.simple.RandomSource;

/**
 * The synthetic stream: record {@code n} is a pure function of the seed, the settings, the resolved
 * start and the late bound, because every random draw comes from one seeded generator in a fixed order.
 * Same inputs, same records, byte for byte (after encoding): that is what makes a ground truth and a
 * replay comparison possible.
 *
 * <p>Shape: customers and SKUs are Zipf-distributed, amounts log-normal (cents, carried at scale 4),
 * statuses mostly APPROVED, valid event times uniform over {@code [start, start + window)}. A configured
 * share of records are duplicates, late, future, invalid or malformed ({@link RecordKind}).
 *
 * <p>With {@code loadgen.orders.share} > 0, that share of the records goes to the orders topic as
 * {@code OrderEvent}s ({@link OrderRouting}, {@link OrderEvents}); every kind works there too, with the
 * same meaning. A duplicate goes where its original went, with the same key, so it reaches the same
 * partition as the original.
 *
 * <p>Not thread-safe: one generator is consumed by one thread (the pacer's).
 */
public final class EventGenerator implements Iterator<OutgoingRecord> {
    private static final String[] CHANNELS = {"WEB", "MOBILE", "STORE", "PHONE"};
    private static final double[] CHANNEL_SHARES = {0.45, 0.35, 0.15, 0.05};
    /** Guest checkouts: no e-mail. */
    static final double EMAIL_NULL_SHARE = 0.05;
    /** Digital goods: no postal code. */
    static final double POSTAL_NULL_SHARE = 0.10;
    /** Duplicates repeat one of this many most recent valid events: close enough for any dedupe horizon. */
    static final int DUPLICATE_WINDOW = 1_024;
    /**
     * Late and future events sit at least this far beyond their bound, so a record stays late or future
     * however long the run takes (up to a day) and whatever clock skew the pipeline has.
     */
    static final Duration MARGIN = Duration.ofDays(1);
    /** Largest amount generated: keeps every amount within the schema's decimal(18, 4). */
    private static final BigDecimal MAX_AMOUNT = new BigDecimal("1000000000.00");
    private static final BigDecimal MIN_AMOUNT = new BigDecimal("0.01");
    /** Three letters, like a real code, but not in ISO 4217. */
    static final String NOT_A_CURRENCY = "ZZZ";

    private final LoadgenSettings s;
    private final Duration lateBound;
    private final RateSchedule schedule;
    private final long total;
    private final UniformRandomProvider rng;
    private final ZipfEntities customers;
    private final ZipfEntities skus;
    private final ContinuousSampler amounts;
    private final Names customerIds = new Names(i -> "c-" + i);
    private final Names skuIds = new Names(i -> "sku-" + i);
    private final Names merchantIds = new Names(i -> "m-" + i);
    private final Names postalCodes = new Names(EventGenerator::postalCode);
    private final OrderRouting routing;
    private final OutgoingRecord[] recent = new OutgoingRecord[DUPLICATE_WINDOW];
    private long recentCount;
    private long sequence;

    /**
     * @param lateBound the longest retention of any rule: an event older than that counts for no rule
     */
    public EventGenerator(LoadgenSettings settings, Duration lateBound) {
        this.s = settings;
        this.lateBound = lateBound;
        this.schedule = RateSchedule.of(settings);
        this.total = settings.plannedRecords();
        // xoroshiro128++: fast, well tested, and its seeding from a long is fixed by Commons RNG.
        this.rng = RandomSource.XO_RO_SHI_RO_128_PP.create(settings.seed());
        this.routing = new OrderRouting(settings.seed(), settings.ordersShare());
        this.customers = new ZipfEntities(rng, settings.customers(), settings.zipfExponent());
        this.skus = new ZipfEntities(rng, settings.skus(), settings.zipfExponent());
        double mu = Math.log(settings.amountMedian().doubleValue()); // the median of a log-normal is e^mu
        this.amounts = LogNormalSampler.of(ZigguratSampler.NormalizedGaussian.of(rng), mu, settings.amountSigma());
    }

    /** How many records this generator yields. */
    public long total() {
        return total;
    }

    @Override
    public boolean hasNext() {
        return sequence < total;
    }

    @Override
    public OutgoingRecord next() {
        if (!hasNext()) throw new NoSuchElementException();
        long n = sequence++;
        long due = schedule.dueNanos(n);
        RecordKind kind = drawKind();
        if (kind == RecordKind.DUPLICATE) {
            if (recentCount == 0) {
                kind = RecordKind.VALID; // nothing to repeat yet
            } else {
                long back = rng.nextLong(Math.min(recentCount, DUPLICATE_WINDOW)); // 0 = the latest valid event
                OutgoingRecord original = recent[(int) ((recentCount - 1 - back) % DUPLICATE_WINDOW)];
                return new OutgoingRecord(n, kind, original.destination(), original.key(), original.event(), null, due, null);
            }
        }
        Destination destination = routing.of(n);
        TransactionEvent event = event(n, eventTime(kind));
        if (kind == RecordKind.INVALID) breakOneRequiredValue(event, destination, n);
        Malformer.Malformation malformation = kind == RecordKind.MALFORMED
                ? new Malformer.Malformation(Malformer.Variant.values()[rng.nextInt(Malformer.Variant.values().length)], rng.nextInt())
                : null;
        OutgoingRecord record = new OutgoingRecord(n, kind, destination, event.getCustomerId(), event, malformation, due, null);
        if (kind == RecordKind.VALID) recent[(int) (recentCount++ % DUPLICATE_WINDOW)] = record;
        return record;
    }

    private RecordKind drawKind() {
        LoadgenSettings.Fractions f = s.fractions();
        double u = rng.nextDouble();
        if ((u -= f.duplicate()) < 0) return RecordKind.DUPLICATE;
        if ((u -= f.late()) < 0) return RecordKind.LATE;
        if ((u -= f.future()) < 0) return RecordKind.FUTURE;
        if ((u -= f.malformed()) < 0) return RecordKind.MALFORMED;
        if ((u -= f.invalid()) < 0) return RecordKind.INVALID;
        return RecordKind.VALID;
    }

    private Instant eventTime(RecordKind kind) {
        long dayMs = MARGIN.toMillis();
        return switch (kind) {
            // Older than the longest retention by a day or more, counted back from the start.
            case LATE -> s.start().minus(lateBound).minus(MARGIN).minusMillis(rng.nextLong(dayMs));
            // Ahead of the end of the window (about "now" with the default start) by skew + a day or more.
            case FUTURE -> s.start().plus(s.window()).plus(s.futureSkew()).plus(MARGIN).plusMillis(rng.nextLong(dayMs));
            default -> s.window().isZero() ? s.start() : s.start().plusMillis(rng.nextLong(s.window().toMillis()));
        };
    }

    private TransactionEvent event(long n, Instant eventTime) {
        String customerId = customerIds.get(customers.nextIndex());
        double u = rng.nextDouble();
        String status = u < s.declinedFraction() ? "DECLINED"
                : u < s.declinedFraction() + s.refundedFraction() ? "REFUNDED" : "APPROVED";
        // Derived from the customer, so orders-per-email follows customers; lower case as the schema says.
        String email = rng.nextDouble() < EMAIL_NULL_SHARE ? null : customerId + "@example.com";
        String postalCode = rng.nextDouble() < POSTAL_NULL_SHARE ? null : postalCodes.get(rng.nextInt(s.postalCodes()));
        String sku = skuIds.get(skus.nextIndex());
        String merchant = merchantIds.get(rng.nextInt(s.merchants()));
        String channel = channel(rng.nextDouble());
        BigDecimal amount = amount(amounts.sample());
        // The all-args constructor, not the builder: the builder validates and copies every field, which
        // was a third of the generation cost.
        return new TransactionEvent("tx-" + s.seed() + "-" + n, eventTime, s.domain(), customerId, email, postalCode,
                sku, merchant, channel, amount, "USD", status, Map.of());
    }

    /**
     * Breaks one value the pipeline requires; the schemas cannot carry null there, so empty is the null.
     * Orders keep the customer id (a mapped rule field, not one the pipeline requires of every source) and
     * break the amount or the currency instead. One draw either way, so the destination never shifts the
     * random stream.
     */
    private void breakOneRequiredValue(TransactionEvent e, Destination destination, long n) {
        int which = rng.nextInt(3);
        if (which == 0) {
            e.setTransactionId("");
        } else if (which == 2) {
            e.setDomain("");
        } else if (destination == Destination.TRANSACTIONS) {
            e.setCustomerId("");
        } else if (routing.flip(n)) {
            e.setAmount(e.getAmount().negate());
        } else {
            e.setCurrency(NOT_A_CURRENCY);
        }
    }

    /** Cents, rounded half-even, at the schema's scale of 4 so the value round-trips exactly. */
    static BigDecimal amount(double sample) {
        BigDecimal cents = BigDecimal.valueOf(sample).setScale(2, RoundingMode.HALF_EVEN);
        return cents.max(MIN_AMOUNT).min(MAX_AMOUNT).setScale(4);
    }

    private static String postalCode(int i) {
        return Integer.toString(10_000 + i * 7 % 90_000); // five digits, spread over 10000..99999
    }

    /**
     * Entity names built once and reused: string building was a large share of generation time, and equal
     * instances make the consumer-side hash maps (ground truth) cheaper too. Caches the first 2^20 only.
     */
    private static final class Names {
        private static final int CACHED = 1 << 20;
        private final java.util.function.IntFunction<String> make;
        private String[] cache = new String[1024];

        Names(java.util.function.IntFunction<String> make) {
            this.make = make;
        }

        String get(int i) {
            if (i >= CACHED) return make.apply(i);
            if (i >= cache.length) cache = java.util.Arrays.copyOf(cache, Math.min(CACHED, Math.max(i + 1, cache.length * 2)));
            String s = cache[i];
            return s != null ? s : (cache[i] = make.apply(i));
        }
    }

    private static String channel(double u) {
        for (int i = 0; i < CHANNELS.length; i++) {
            if ((u -= CHANNEL_SHARES[i]) < 0) return CHANNELS[i];
        }
        return CHANNELS[CHANNELS.length - 1];
    }
}
