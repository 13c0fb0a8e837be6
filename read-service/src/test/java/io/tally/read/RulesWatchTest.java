package io.tally.read;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.tally.model.TimeUnit;
import io.tally.rules.state.RulesState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RulesWatchTest {
    /** What the next reads of the record give: a record, none, or a failure. */
    final Deque<Supplier<Optional<RulesState>>> reads = new ArrayDeque<>();
    final MutableClock clock = new MutableClock();
    final RulesWatch watch = new RulesWatch(() -> reads.remove().get(), RulesView.ofFile(RulesFixtures.file(), "file.yaml"),
            Duration.ofSeconds(10), clock);
    final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    final Logger logger = (Logger) LoggerFactory.getLogger(RulesWatch.class);

    @BeforeEach
    void capture() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logged);
        watch.close();
    }

    void next(RulesState state) {
        reads.add(() -> Optional.of(state));
    }

    void none() {
        reads.add(Optional::empty);
    }

    void failing(String why) {
        reads.add(() -> {
            throw new IllegalStateException(why);
        });
    }

    long generation() {
        return watch.current().record().map(RulesState::generation).orElse(-1L);
    }

    List<String> warnings() {
        return logged.list.stream().filter(e -> e.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void withoutARecordTheFileIsAnsweredAndKnownOnceTheContainerSaidSo() {
        assertThat(watch.known()).isFalse();
        none();
        watch.refresh();
        assertThat(watch.known()).isTrue();
        assertThat(watch.current().source()).isEqualTo("file");
        assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage).anyMatch(m -> m.contains("the rules file file.yaml"));
    }

    @Test
    void aFirstReadThatFailsLeavesTheRulesUnknownUntilOneSucceeds() {
        failing("store down");
        watch.refresh();
        assertThat(watch.known()).isFalse();
        assertThat(watch.current().source()).isEqualTo("file");
        next(RulesFixtures.first());
        watch.refresh();
        assertThat(watch.known()).isTrue();
        assertThat(generation()).isZero();
    }

    @Test
    void aNewerGenerationOrAChangedRecordSwapsInAndNothingElseDoes() {
        next(RulesFixtures.first());
        watch.refresh();
        RulesView first = watch.current();
        assertThat(first.source()).isEqualTo("record");
        next(RulesFixtures.first());
        watch.refresh();
        assertThat(watch.current()).as("the same record keeps its snapshot").isSameAs(first);

        next(RulesFixtures.second());
        watch.refresh();
        assertThat(generation()).isEqualTo(2);
        assertThat(watch.current().status("orders", TimeUnit.HOUR)).isEmpty();

        next(RulesFixtures.second().backfilled("spend", TimeUnit.DAY));
        watch.refresh();
        assertThat(watch.current().status("spend", TimeUnit.DAY).orElseThrow().recorded().complete())
                .as("a backfill completes within its generation").isTrue();

        RulesView answered = watch.current();
        next(RulesFixtures.first());
        watch.refresh();
        assertThat(watch.current()).as("an older generation").isSameAs(answered);
        assertThat(warnings()).anyMatch(w -> w.startsWith("the rules record read is generation 0, older than generation 2"));
        none();
        watch.refresh();
        assertThat(watch.current()).as("a record gone").isSameAs(answered);
        assertThat(warnings()).anyMatch(w -> w.startsWith("the rules record is gone from the container"));
        failing("timeout");
        watch.refresh();
        assertThat(watch.current()).as("a failed read").isSameAs(answered);
        RulesState broken = new RulesState(3, Instant.EPOCH, "x", "rules: [", List.of(), List.of());
        next(broken);
        watch.refresh();
        assertThat(watch.current()).as("rules that do not parse").isSameAs(answered);
        assertThat(watch.known()).isTrue();
    }

    @Test
    void aFailureIsLoggedWhenItStartsOrChangesAndEveryFiveMinutesWhileItLasts() {
        for (int i = 0; i < 5; i++) {
            failing("store down");
            watch.refresh();
            clock.advance(Duration.ofSeconds(10));
        }
        assertThat(warnings()).hasSize(1);
        assertThat(warnings().get(0)).contains("cannot read the rules record (IllegalStateException: store down)", "the rules file file.yaml");
        failing("other");
        watch.refresh();
        assertThat(warnings()).hasSize(2);
        clock.advance(RulesWatch.RELOG);
        failing("other");
        watch.refresh();
        assertThat(warnings()).hasSize(3);
        assertThat(warnings().get(2)).contains("failed 7 time(s) in a row");

        none();
        watch.refresh();
        assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage).contains("rules record read again after 7 failed attempt(s)");
        failing("store down");
        watch.refresh();
        assertThat(warnings()).as("a new outage is news again").hasSize(4);
    }

    @Test
    void theTimerPicksUpANewRecordWithoutBeingAsked() throws Exception {
        List<RulesState> records = new java.util.concurrent.CopyOnWriteArrayList<>(List.of(RulesFixtures.first()));
        try (RulesWatch timed = new RulesWatch(() -> Optional.of(records.get(records.size() - 1)),
                RulesView.ofFile(RulesFixtures.file(), "file.yaml"), Duration.ofMillis(20), Clock.systemUTC())) {
            timed.refresh();
            timed.start();
            records.add(RulesFixtures.second());
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (timed.current().record().orElseThrow().generation() != 2 && System.nanoTime() < deadline) Thread.sleep(10);
            assertThat(timed.current().record().orElseThrow().generation()).isEqualTo(2);
        }
    }

    static final class MutableClock extends Clock {
        private Instant now = Instant.parse("2026-11-21T10:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
