package io.tidemark.sync.internal.engine;

import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

class KnownStatesTest {

    private static final Instant READ_AT = Instant.parse("2026-03-04T05:06:07Z");
    private static final WatermarkState STORED = new WatermarkState("Items", 5L, false, READ_AT.minusSeconds(60),
            READ_AT, "STORE_FAILED: earlier", "p:f", Map.of(
                    "a", new DestinationPosition("Items", "a", 5L, false),
                    "b", new DestinationPosition("Items", "b", 7L, true)));

    private final KnownStates known = new KnownStates();

    @Test
    void a_state_read_is_used_until_the_refresh_with_the_engines_own_writes_applied() {
        known.read("Items", STORED, READ_AT, known.generation("Items"));
        Instant at = READ_AT.plusMillis(10);
        known.advanced("Items", "p:f", 6, List.of(new PositionAdvance("a", OptionalLong.of(5), 6)), at,
                known.generation("Items"));

        WatermarkState now = known.fresh("Items", at).orElseThrow();
        assertThat(now.version()).hasValue(6);
        assertThat(now.lastMovedAt()).contains(at);
        assertThat(now.lastError()).as("a write clears the row's error").isEmpty();
        assertThat(now.positions().get("a").position()).hasValue(6);
        assertThat(now.positions().get("b")).as("untouched, still paused").isEqualTo(STORED.positions().get("b"));
        assertThat(known.fresh("Items", READ_AT.plus(KnownStates.REFRESH))).isEmpty();
    }

    @Test
    void a_write_at_the_same_watermark_keeps_when_it_last_moved() {
        known.read("Items", STORED, READ_AT, 0);
        known.advanced("Items", "p:f", 5, List.of(new PositionAdvance("b", OptionalLong.of(7), 9)), READ_AT, 0);

        WatermarkState now = known.fresh("Items", READ_AT).orElseThrow();
        assertThat(now.lastMovedAt()).isEqualTo(STORED.lastMovedAt());
        assertThat(now.positions().get("b").paused()).isTrue();
    }

    @Test
    void an_error_cleared_by_the_engine_is_no_longer_known_and_the_rest_stays() {
        known.read("Items", STORED, READ_AT, 0);
        Instant at = READ_AT.plusMillis(10);
        known.errorCleared("Items", at, 0);

        WatermarkState now = known.fresh("Items", at).orElseThrow();
        assertThat(now.lastError()).isEmpty();
        assertThat(now.lastPolledAt()).contains(at);
        assertThat(now.version()).isEqualTo(STORED.version());
        assertThat(now.lastMovedAt()).isEqualTo(STORED.lastMovedAt());
        assertThat(now.source()).isEqualTo(STORED.source());
        assertThat(now.positions()).isEqualTo(STORED.positions());
        assertThat(known.fresh("Items", READ_AT.plus(KnownStates.REFRESH))).as("read when it was").isEmpty();

        known.forget("Items");
        known.read("Items", STORED, READ_AT, known.generation("Items"));
        known.errorCleared("Items", at, 0);
        assertThat(known.fresh("Items", at).orElseThrow().lastError()).as("recorded by a cycle of a stale generation")
                .isEqualTo(STORED.lastError());
    }

    @Test
    void forgetting_makes_what_a_running_cycle_records_afterwards_stale() {
        long generation = known.generation("Items");
        known.forget("Items"); // a pause while the cycle ran
        known.read("Items", STORED, READ_AT, generation);

        assertThat(known.fresh("Items", READ_AT)).isEmpty();

        known.read("Items", STORED, READ_AT, known.generation("Items"));
        known.forgetAll();
        assertThat(known.fresh("Items", READ_AT)).isEmpty();
    }
}
