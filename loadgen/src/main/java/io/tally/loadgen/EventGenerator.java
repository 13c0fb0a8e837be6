package io.tally.loadgen;

import io.tally.schemas.avro.TransactionEvent;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Map;
import java.util.SplittableRandom;

/** Deterministic events: the same seed gives the same sequence, which is what makes a ground truth possible. */
final class EventGenerator {
    private static final String[] CHANNELS = {"WEB", "MOBILE", "STORE", "PHONE"};

    private final SplittableRandom random;
    private final LoadgenSettings settings;
    private final Instant start;
    private long sequence;

    EventGenerator(LoadgenSettings settings, Instant start) {
        this.random = new SplittableRandom(settings.seed());
        this.settings = settings;
        this.start = start;
    }

    TransactionEvent next() {
        long n = sequence++;
        String customer = "c-" + random.nextInt(settings.customers());
        return TransactionEvent.newBuilder()
                .setTransactionId("tx-" + settings.seed() + "-" + n)
                .setEventTime(start.plusMillis(n * 10))
                .setDomain(settings.domain())
                .setCustomerId(customer)
                .setEmail(customer + "@example.com")
                .setPostalCode("1000" + random.nextInt(10))
                .setSku("sku-" + random.nextInt(20))
                .setMerchant("m-" + random.nextInt(5))
                .setChannel(CHANNELS[random.nextInt(CHANNELS.length)])
                // Whole cents, carried at the schema's scale of 4 so the decimal round-trips exactly.
                .setAmount(BigDecimal.valueOf(100 + random.nextInt(99_900), 2).setScale(4))
                .setCurrency("USD")
                .setStatus("APPROVED")
                .setAttributes(Map.of())
                .build();
    }
}
