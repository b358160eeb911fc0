package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.testkit.MutableClock;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a cycle reads the store, and what it writes when a call returns nothing: a polled cycle starts from the state
 * the engine read and wrote itself for up to {@link KnownStates#REFRESH}; a call that returns no changes writes
 * nothing unless something must be recorded.
 */
class StoreReadsTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "public.items_changes");

    private final MutableClock clock = new MutableClock(Instant.parse("2026-03-04T05:06:07Z"));
    private final ScriptedProvider scripted = new ScriptedProvider();
    private final AtomicInteger loads = new AtomicInteger();
    private final AtomicInteger writes = new AtomicInteger();
    /** The errors recorded with {@code recordPoll}, in order; empty for a cleared one. */
    private final List<Optional<String>> polls = new CopyOnWriteArrayList<>();
    private final ForwardingWatermarkStore store = new ForwardingWatermarkStore() {
        @Override
        public Optional<WatermarkState> load(String objectName) {
            loads.incrementAndGet();
            return super.load(objectName);
        }

        @Override
        public void recordPoll(String objectName, Instant at, String error) {
            polls.add(Optional.ofNullable(error));
            super.recordPoll(objectName, at, error);
        }

        @Override
        public void advance(String objectName, String source, OptionalLong expected, long newVersion,
                            List<PositionAdvance> positions, Instant at) {
            writes.incrementAndGet();
            super.advance(objectName, source, expected, newVersion, positions, at);
        }
    };
    private final RecordingDestination out = new RecordingDestination();
    private final CycleRunner runner = new CycleRunner(new EngineConfig("test", scripted, store, null,
            List.of(ITEMS), List.of(new NamedDestination("out", out, DeliveryPolicy.block())), List.of(),
            Duration.ofSeconds(30), 100, null, Duration.ofSeconds(30), clock), new EngineCallContext());

    /** The object stands at version 1, with a position for its destination, as after its first cycles. */
    private void storedAtOne() {
        store.advance("Items", SOURCE, OptionalLong.empty(), 1,
                List.of(new PositionAdvance("out", OptionalLong.empty(), 1)), clock.instant());
        writes.set(0);
    }

    private static final String SOURCE = "scripted:public.items_changes";

    @Test
    void polled_cycles_start_from_the_state_the_engine_wrote_and_read_the_store_again_after_the_refresh() {
        storedAtOne();
        scripted.object("Items")
                .thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1")))
                .thenReturn(response(5, "Diff", 0, row("I", 5, "\"Id\":2")))
                .thenReturn(response(7, "Diff", 0, row("I", 7, "\"Id\":3")))
                .thenReturn(response(9, "Diff", 0, row("I", 9, "\"Id\":4")));

        assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(loads).as("nothing known yet: read").hasValue(1);
        assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.DELIVERED);
        clock.advance(KnownStates.REFRESH.minusMillis(1));
        assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(loads).as("the state it read and wrote itself").hasValue(1);
        clock.advance(Duration.ofMillis(1));
        assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(loads).as("a second after the last read: read again").hasValue(2);

        assertThat(scripted.requests("Items")).extracting(ChangeRequest::fromVersion)
                .containsExactly(1L, 3L, 5L, 7L);
        assertThat(store.load("Items").orElseThrow().version()).hasValue(9);
        assertThat(store.load("Items").orElseThrow().positions().get("out").position()).hasValue(9);
    }

    @Test
    void a_cycle_the_application_runs_always_reads_the_store() {
        storedAtOne();
        scripted.object("Items")
                .thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1")))
                .thenReturn(response(5, "Diff", 0, row("I", 5, "\"Id\":2")));

        runner.run(ITEMS);
        runner.run(ITEMS);

        assertThat(loads).hasValue(2);
    }

    @Test
    void a_pause_from_outside_the_engine_is_read_within_the_refresh_and_the_engines_own_at_the_next_cycle() {
        storedAtOne();
        scripted.object("Items")
                .thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1")))
                .thenReturn(response(3, "Diff", 0));
        runner.run(ITEMS, true);

        store.setPaused("Items", true, clock.instant()); // the tidemark command, say
        assertThat(runner.run(ITEMS, true).outcome()).as("not read yet").isEqualTo(Outcome.NO_CHANGES);
        clock.advance(KnownStates.REFRESH);
        assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.PAUSED);

        store.setPaused("Items", false, clock.instant());
        runner.forget("Items"); // as the engine's resume(...) does
        scripted.object("Items").thenReturn(response(3, "Diff", 0));
        assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.NO_CHANGES);
    }

    @Test
    void a_write_by_someone_else_fails_the_compare_and_set_and_the_next_cycle_reads_the_store() {
        storedAtOne();
        scripted.object("Items")
                .thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1")))
                .thenReturn(response(5, "Diff", 0, row("I", 5, "\"Id\":2")))
                .thenReturn(response(9, "Diff", 0, row("I", 9, "\"Id\":3")));
        runner.run(ITEMS, true);
        // Another instance moved the object on meanwhile.
        store.advance("Items", SOURCE, OptionalLong.of(3), 4,
                List.of(new PositionAdvance("out", OptionalLong.of(3), 4)), clock.instant());

        ObjectReport conflicted = runner.run(ITEMS, true);
        assertThat(conflicted.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(store.load("Items").orElseThrow().version()).as("nothing overwritten").hasValue(4);

        assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(scripted.requests("Items").get(2).fromVersion()).as("from what the store holds").isEqualTo(4L);
    }

    @Test
    void a_call_whose_version_moved_without_changes_writes_nothing_until_the_interval_passed() {
        storedAtOne();
        scripted.object("Items")
                .thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1")))
                .thenReturn(response(4, "Diff", 0))
                .thenReturn(response(5, "Diff", 0))
                .thenReturn(response(6, "Diff", 0));
        runner.run(ITEMS, true);
        assertThat(writes).hasValue(1);

        ObjectReport nothingNew = runner.run(ITEMS, true);
        assertThat(nothingNew.outcome()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(nothingNew.toVersion()).as("the stored version stands").hasValue(3);
        clock.advance(CycleRunner.EMPTY_MOVE_INTERVAL.minusMillis(1));
        runner.run(ITEMS, true);
        assertThat(writes).hasValue(1);
        assertThat(scripted.requests("Items")).extracting(ChangeRequest::fromVersion).last()
                .as("asked again from the stored version").isEqualTo(3L);

        clock.advance(Duration.ofMillis(1));
        assertThat(runner.run(ITEMS, true).toVersion()).hasValue(6);
        assertThat(writes).as("the interval passed: the moved version is stored").hasValue(2);
    }

    @Test
    void an_error_cleared_without_a_write_of_positions_is_cleared_once_not_at_every_cycle_reusing_the_state() {
        storedAtOne();
        scripted.object("Items")
                .thenFail(new SQLException("deadlock detected", "40P01"))
                .thenReturn(response(1, "Diff", 0))
                .thenReturn(response(1, "Diff", 0))
                .thenReturn(response(1, "Diff", 0));
        assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.FAILED);
        assertThat(polls).hasSize(1);
        assertThat(polls.get(0)).as("the failure is on the row").isPresent();

        for (int i = 0; i < 3; i++) {
            assertThat(runner.run(ITEMS, true).outcome()).isEqualTo(Outcome.NO_CHANGES);
        }

        assertThat(writes).as("nothing moved").hasValue(0);
        assertThat(polls).as("cleared by the first cycle that succeeded, then known clear")
                .containsExactly(polls.get(0), Optional.empty());
        assertThat(store.load("Items").orElseThrow().lastError()).isEmpty();
    }

    @Test
    void a_full_answer_without_rows_stores_its_version_at_once() {
        storedAtOne();
        scripted.object("Items")
                .thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1")))
                .thenReturn(response(8, "Full", 1));
        runner.run(ITEMS, true);

        assertThat(runner.run(ITEMS, true).toVersion()).as("else every call would ask for the full answer again")
                .hasValue(8);
        assertThat(writes).hasValue(2);
    }
}
