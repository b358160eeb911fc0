package io.tidemark.testing;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour every {@link WatermarkStore} must have, including that a version is bound to the source
 * (procedure identity) that produced it. Extend it in a test of your own store and implement
 * {@link #store()}; each test uses object names of its own, so the store may be shared between tests.
 *
 * <pre>{@code
 * class RedisWatermarkStoreTest extends WatermarkStoreContract {
 *     protected WatermarkStore store() { return myStore; }
 * }
 * }</pre>
 */
public abstract class WatermarkStoreContract {

    /** Whole microseconds: what SQL timestamp columns keep. */
    private static final Instant T1 = Instant.parse("2026-01-02T03:04:05.123456Z");
    private static final Instant T2 = T1.plusSeconds(60);
    private static final Instant T3 = T2.plusSeconds(60);

    /** What produced the versions the contract stores; {@link #OTHER_SOURCE} is another procedure. */
    private static final String SOURCE = "contract:\"public\".\"items_changes\"";
    private static final String OTHER_SOURCE = "contract:\"public\".\"orders_changes\"";

    protected abstract WatermarkStore store();

    private static String name() {
        return "contract-" + UUID.randomUUID();
    }

    private static ErrorCode codeOf(Throwable e) {
        return ((TidemarkException) e).code();
    }

    @Test
    void nothing_is_stored_for_an_unknown_object() {
        assertThat(store().load(name())).isEmpty();
    }

    @Test
    void the_first_advance_stores_the_version_and_its_times() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 7, T1);

        WatermarkState state = store().load(name).orElseThrow();
        assertThat(state.version()).hasValue(7);
        assertThat(state.lastMovedAt()).hasValue(T1);
        assertThat(state.lastPolledAt()).hasValue(T1);
        assertThat(state.lastError()).isEmpty();
        assertThat(state.paused()).isFalse();
        assertThat(state.source()).hasValue(SOURCE);
    }

    @Test
    void a_version_from_another_source_is_refused_and_nothing_changes() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 10, T1);

        assertThatThrownBy(() -> store().advance(name, OTHER_SOURCE, OptionalLong.of(10), 11, T2))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining(name).hasMessageContaining(SOURCE).hasMessageContaining(OTHER_SOURCE)
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_SOURCE_CHANGED));
        WatermarkState state = store().load(name).orElseThrow();
        assertThat(state.version()).hasValue(10);
        assertThat(state.source()).hasValue(SOURCE);
        assertThat(state.lastPolledAt()).hasValue(T1);
    }

    @Test
    void an_adopted_source_continues_from_the_stored_version_and_the_old_one_is_refused() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 10, T1);

        store().adoptSource(name, OTHER_SOURCE, T2);
        WatermarkState adopted = store().load(name).orElseThrow();
        assertThat(adopted.version()).hasValue(10);
        assertThat(adopted.source()).hasValue(OTHER_SOURCE);

        store().advance(name, OTHER_SOURCE, OptionalLong.of(10), 12, T3);
        assertThat(store().load(name).orElseThrow().version()).hasValue(12);
        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.of(12), 13, T3))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_SOURCE_CHANGED));
    }

    @Test
    void adopting_without_a_stored_version_stores_nothing() {
        String name = name();
        store().adoptSource(name, SOURCE, T1);
        assertThat(store().load(name).flatMap(WatermarkState::source)).isEmpty();

        store().recordPoll(name, T1, null);
        store().adoptSource(name, SOURCE, T2);
        assertThat(store().load(name).orElseThrow().source()).isEmpty();
        store().advance(name, OTHER_SOURCE, OptionalLong.empty(), 1, T3);
        assertThat(store().load(name).orElseThrow().source()).hasValue(OTHER_SOURCE);
    }

    @Test
    void reset_forgets_the_source_so_another_may_start_again() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 10, T1);
        store().reset(name, T2);
        assertThat(store().load(name).orElseThrow().source()).isEmpty();

        store().advance(name, OTHER_SOURCE, OptionalLong.empty(), 3, T3);
        WatermarkState state = store().load(name).orElseThrow();
        assertThat(state.version()).hasValue(3);
        assertThat(state.source()).hasValue(OTHER_SOURCE);
    }

    @Test
    void polls_and_pauses_keep_the_source() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 10, T1);
        store().recordPoll(name, T2, "PROCEDURE_FAILED: boom");
        store().setPaused(name, true, T3);
        assertThat(store().load(name).orElseThrow().source()).hasValue(SOURCE);
        assertThat(store().loadAll().get(name).source()).hasValue(SOURCE);
    }

    @Test
    void a_version_without_a_source_is_refused() {
        String name = name();
        assertThatThrownBy(() -> store().advance(name, null, OptionalLong.empty(), 1, T1))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
        assertThatThrownBy(() -> store().advance(name, " ", OptionalLong.empty(), 1, T1))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
        assertThat(store().load(name)).isEmpty();
    }

    @Test
    void a_stored_zero_is_a_version_not_an_absence() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 0, T1);

        assertThat(store().load(name).orElseThrow().version()).hasValue(0);
        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.empty(), 5, T2))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_CONFLICT));
        store().advance(name, SOURCE, OptionalLong.of(0), 5, T2);
        assertThat(store().load(name).orElseThrow().version()).hasValue(5);
    }

    @Test
    void a_lower_version_is_refused_and_nothing_changes() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 10, T1);

        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.of(10), 9, T2))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining(name)
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_REGRESSION));
        assertThat(store().load(name).orElseThrow().version()).hasValue(10);
        assertThat(store().load(name).orElseThrow().lastPolledAt()).hasValue(T1);
    }

    @Test
    void a_write_from_a_stale_expectation_is_refused() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 10, T1);
        store().advance(name, SOURCE, OptionalLong.of(10), 20, T2);

        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.of(10), 15, T3))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_REGRESSION));
        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.of(10), 25, T3))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_CONFLICT));
        assertThat(store().load(name).orElseThrow().version()).hasValue(20);
    }

    @Test
    void an_unchanged_version_updates_the_poll_time_but_not_the_move_time() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 10, T1);
        store().advance(name, SOURCE, OptionalLong.of(10), 10, T2);

        WatermarkState state = store().load(name).orElseThrow();
        assertThat(state.lastMovedAt()).hasValue(T1);
        assertThat(state.lastPolledAt()).hasValue(T2);
    }

    @Test
    void a_recorded_error_stays_until_the_next_advance() {
        String name = name();
        store().recordPoll(name, T1, "DESTINATION_FAILED: nope");
        WatermarkState failed = store().load(name).orElseThrow();
        assertThat(failed.version()).isEmpty();
        assertThat(failed.lastError()).hasValue("DESTINATION_FAILED: nope");
        assertThat(failed.lastPolledAt()).hasValue(T1);

        store().advance(name, SOURCE, OptionalLong.empty(), 3, T2);
        assertThat(store().load(name).orElseThrow().lastError()).isEmpty();
        store().recordPoll(name, T3, null);
        assertThat(store().load(name).orElseThrow().lastPolledAt()).hasValue(T3);
    }

    @Test
    void pausing_keeps_the_version_and_reset_keeps_the_pause() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 4, T1);
        store().setPaused(name, true, T2);
        assertThat(store().load(name).orElseThrow().paused()).isTrue();
        assertThat(store().load(name).orElseThrow().version()).hasValue(4);

        store().reset(name, T3);
        WatermarkState reset = store().load(name).orElseThrow();
        assertThat(reset.version()).isEmpty();
        assertThat(reset.paused()).isTrue();

        store().setPaused(name, false, T3);
        assertThat(store().load(name).orElseThrow().paused()).isFalse();
        store().advance(name, SOURCE, OptionalLong.empty(), 1, T3);
        assertThat(store().load(name).orElseThrow().version()).hasValue(1);
    }

    @Test
    void a_pause_can_be_stored_before_any_version() {
        String name = name();
        store().setPaused(name, true, T1);
        assertThat(store().load(name).orElseThrow().paused()).isTrue();
        assertThat(store().load(name).orElseThrow().version()).isEmpty();
    }

    @Test
    void load_all_lists_every_object() {
        String a = name();
        String b = name();
        store().advance(a, SOURCE, OptionalLong.empty(), 1, T1);
        store().setPaused(b, true, T1);

        assertThat(store().loadAll()).containsKeys(a, b);
        assertThat(store().loadAll().get(a).version()).hasValue(1);
    }

    /** Eight writers race from the same expected version, twenty times: exactly one wins each round. */
    @Test
    void concurrent_writers_cannot_both_win_or_go_backwards() throws Exception {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 0, T1);
        int writers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            for (int round = 0; round < 20; round++) {
                long expected = store().load(name).orElseThrow().version().getAsLong();
                CyclicBarrier start = new CyclicBarrier(writers);
                List<Future<Boolean>> results = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    long next = expected + 1 + w;
                    results.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        try {
                            store().advance(name, SOURCE, OptionalLong.of(expected), next, T2);
                            return true;
                        } catch (TidemarkException e) {
                            assertThat(e.code()).isIn(ErrorCode.WATERMARK_CONFLICT, ErrorCode.WATERMARK_REGRESSION);
                            return false;
                        }
                    }));
                }
                int winners = 0;
                for (Future<Boolean> result : results) {
                    winners += result.get(60, TimeUnit.SECONDS) ? 1 : 0;
                }
                assertThat(winners).as("winners of round %d", round).isEqualTo(1);
                assertThat(store().load(name).orElseThrow().version().getAsLong()).isGreaterThan(expected);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // Destination positions: written with the watermark, compare-and-set, all or nothing.

    private static PositionAdvance first(String destination, long version) {
        return new PositionAdvance(destination, OptionalLong.empty(), version);
    }

    private static PositionAdvance from(String destination, long expected, long version) {
        return new PositionAdvance(destination, OptionalLong.of(expected), version);
    }

    private OptionalLong position(String name, String destination) {
        DestinationPosition p = store().load(name).orElseThrow().positions().get(destination);
        return p == null ? OptionalLong.empty() : p.position();
    }

    @Test
    void positions_are_stored_with_the_watermark_and_loaded_with_it() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 5, List.of(first("a", 5), first("b", 5)), T1);
        store().advance(name, SOURCE, OptionalLong.of(5), 5, List.of(from("a", 5, 9)), T2);

        WatermarkState state = store().load(name).orElseThrow();
        assertThat(state.version()).hasValue(5);
        assertThat(state.positions()).containsOnlyKeys("a", "b");
        assertThat(position(name, "a")).hasValue(9);
        assertThat(position(name, "b")).hasValue(5);
        assertThat(state.lastMovedAt()).hasValue(T1);
        assertThat(store().loadAll().get(name).positions().get("a").version()).isEqualTo(9L);
    }

    @Test
    void a_stale_position_is_refused_and_nothing_of_the_write_is_kept() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 5, List.of(first("a", 5), first("b", 5)), T1);

        // "a" moves fine, "b" is not where this writer thinks: neither position nor the watermark changes.
        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.of(5), 6,
                List.of(from("a", 5, 8), from("b", 4, 6)), T2))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining(name).hasMessageContaining("'b'")
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_CONFLICT));
        assertThat(position(name, "a")).hasValue(5);
        assertThat(position(name, "b")).hasValue(5);
        assertThat(store().load(name).orElseThrow().version()).hasValue(5);

        // A first position for a destination that has one already is stale too.
        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.of(5), 5, List.of(first("a", 7)), T2))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_CONFLICT));
        assertThat(position(name, "a")).hasValue(5);
    }

    @Test
    void a_position_that_would_go_down_is_refused() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 5, List.of(first("a", 5)), T1);

        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.of(5), 5, List.of(from("a", 5, 4)), T2))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_REGRESSION))
                .hasMessageContaining("'a'");
        assertThat(position(name, "a")).hasValue(5);
    }

    @Test
    void a_failed_watermark_write_keeps_the_positions_unchanged() {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 5, List.of(first("a", 5)), T1);

        assertThatThrownBy(() -> store().advance(name, SOURCE, OptionalLong.of(3), 6, List.of(from("a", 5, 6)), T2))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.WATERMARK_CONFLICT));
        assertThat(position(name, "a")).hasValue(5);
    }

    @Test
    void a_destination_pause_keeps_its_position_and_reset_keeps_only_the_pause() {
        String name = name();
        store().setDestinationPaused(name, "early", true, T1); // before anything was stored
        assertThat(store().load(name).orElseThrow().positions().get("early"))
                .isEqualTo(new DestinationPosition(name, "early", null, true));
        store().advance(name, SOURCE, OptionalLong.empty(), 5, List.of(first("a", 5), first("early", 5)), T1);

        store().setDestinationPaused(name, "a", true, T2);
        assertThat(store().load(name).orElseThrow().positions().get("a"))
                .isEqualTo(new DestinationPosition(name, "a", 5L, true));
        assertThat(store().load(name).orElseThrow().positions().get("early"))
                .isEqualTo(new DestinationPosition(name, "early", 5L, true));
        store().setDestinationPaused(name, "a", false, T2);
        assertThat(store().load(name).orElseThrow().positions().get("a").paused()).isFalse();
        store().setDestinationPaused(name, "a", true, T2);

        store().reset(name, T3);
        WatermarkState reset = store().load(name).orElseThrow();
        assertThat(reset.version()).isEmpty();
        assertThat(reset.positions().values()).allSatisfy(p -> assertThat(p.version()).isNull());
        assertThat(reset.positions().get("a").paused()).isTrue();
        store().advance(name, SOURCE, OptionalLong.empty(), 1, List.of(first("a", 1)), T3);
        assertThat(position(name, "a")).hasValue(1);
    }

    /** Writers race one destination's position from the same expectation: exactly one wins each round. */
    @Test
    void concurrent_writers_of_a_position_cannot_both_win() throws Exception {
        String name = name();
        store().advance(name, SOURCE, OptionalLong.empty(), 0, List.of(first("a", 0)), T1);
        int writers = 6;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            for (int round = 0; round < 10; round++) {
                long expected = position(name, "a").getAsLong();
                long watermark = store().load(name).orElseThrow().version().getAsLong();
                CyclicBarrier start = new CyclicBarrier(writers);
                List<Future<Boolean>> results = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    long next = expected + 1 + w;
                    results.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        try {
                            store().advance(name, SOURCE, OptionalLong.of(watermark), watermark,
                                    List.of(from("a", expected, next)), T2);
                            return true;
                        } catch (TidemarkException e) {
                            assertThat(e.code()).isEqualTo(ErrorCode.WATERMARK_CONFLICT);
                            return false;
                        }
                    }));
                }
                int winners = 0;
                for (Future<Boolean> result : results) {
                    winners += result.get(60, TimeUnit.SECONDS) ? 1 : 0;
                }
                assertThat(winners).as("winners of round %d", round).isEqualTo(1);
                assertThat(position(name, "a").getAsLong()).isGreaterThan(expected);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
