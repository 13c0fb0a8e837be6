package io.tally.loadgen.truth;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.loadgen.Destination;
import io.tally.loadgen.EventGenerator;
import io.tally.loadgen.LoadgenSettings;
import io.tally.loadgen.OrderEvents;
import io.tally.loadgen.RecordKind;
import io.tally.loadgen.rules.RuleSet;
import io.tally.schemas.avro.TransactionEvent;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The ground truth of a stream does not depend on how much of it goes out as orders. */
class OrdersGroundTruthTest {
    static final Instant NOW = Instant.parse("2026-11-21T12:34:56Z");

    @Test
    void theGroundTruthIsTheSameAtAnyShare() throws Exception {
        GroundTruth none = truthOf("0"), half = truthOf("0.5"), all = truthOf("1");
        assertThat(none.accepted()).isGreaterThan(8_500);
        assertThat(none.expectedDlq().values()).allMatch(n -> n > 0);
        for (GroundTruth t : new GroundTruth[] {half, all}) {
            assertThat(t.accepted()).isEqualTo(none.accepted());
            assertThat(t.duplicates()).isEqualTo(none.duplicates());
            assertThat(t.expectedDlq()).isEqualTo(none.expectedDlq());
            assertThat(t.amountByCustomer()).isEqualTo(none.amountByCustomer());
            assertThat(flatten(t)).isEqualTo(flatten(none));
        }
    }

    @Test
    void aNegativeAmountOrACurrencyOutsideIso4217IsInvalid() {
        GroundTruth truth = new GroundTruth(RuleSet.parse(GroundTruthTest.RULES, "test"), Duration.ofMinutes(5));
        String time = "2026-03-01T00:00:00Z";
        truth.onEvent(GroundTruthTest.ev("tx1", "c1", "a@x", "s1", "APPROVED", "-0.01", time), GroundTruthTest.T);
        TransactionEvent badCurrency = GroundTruthTest.ev("tx2", "c1", "a@x", "s1", "APPROVED", "1", time);
        badCurrency.setCurrency("ZZZ");
        truth.onEvent(badCurrency, GroundTruthTest.T);
        truth.onEvent(GroundTruthTest.ev("tx3", "c1", "a@x", "s1", "APPROVED", "0", time), GroundTruthTest.T);
        assertThat(truth.expectedDlq()).containsEntry(GroundTruth.INVALID, 2L);
        assertThat(truth.accepted()).as("a zero amount counts").isEqualTo(1);
    }

    /** Every bucket as {@code pk id -> sum count min max}: BucketValue compares by identity. */
    private static Map<String, String> flatten(GroundTruth t) {
        Map<String, String> out = new TreeMap<>();
        t.buckets().forEach((pk, ids) -> ids.forEach((id, v) ->
                out.put(pk + " " + id, v.sum().toPlainString() + " " + v.count() + " " + v.min().toPlainString() + " " + v.max().toPlainString())));
        return out;
    }

    /**
     * The truth of a stream as loadgen feeds it (acknowledged now), each order first taken through its
     * OrderEvent and back, so the truth sees exactly what the order carries.
     */
    private static GroundTruth truthOf(String share) throws Exception {
        LoadgenSettings s = LoadgenSettings.load(new String[] {"--loadgen.events=10000", "--loadgen.seed=3",
                "--loadgen.customers=100", "--loadgen.duplicate.fraction=0.05", "--loadgen.late.fraction=0.01",
                "--loadgen.future.fraction=0.01", "--loadgen.malformed.fraction=0.01", "--loadgen.invalid.fraction=0.03",
                "--loadgen.orders.topic=orders", "--loadgen.orders.share=" + share}, Map.of(), NOW);
        GroundTruth truth = new GroundTruth(RuleSet.load(Path.of("rules/default-rules.yaml")), s.futureSkew());
        new EventGenerator(s, truth.rules().lateBound()).forEachRemaining(r -> {
            if (r.kind() == RecordKind.MALFORMED) {
                truth.onUndecodable();
            } else {
                TransactionEvent e = r.destination() == Destination.ORDERS ? OrderEvents.toTransaction(OrderEvents.toOrder(r.event())) : r.event();
                truth.onEvent(e, NOW);
            }
        });
        return truth;
    }
}
