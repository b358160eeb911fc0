package io.tidemark.destinations.jdbc.internal;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.SyncType;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.tidemark.destinations.jdbc.internal.Position.Decision.APPLY;
import static io.tidemark.destinations.jdbc.internal.Position.Decision.SKIP;
import static org.assertj.core.api.Assertions.assertThat;

/** Which offered pages a recorded position skips. */
class JdbcPositionTest {

    private static ChangeBatch page(SyncType type, long from, long to, int page, int count) {
        return new ChangeBatch("Items", from, to, type, 0, List.of(), page, count, 0);
    }

    @Test
    void nothing_recorded_applies_everything() {
        assertThat(Position.NONE.decide(page(SyncType.DIFF, 0, 5, 1, 1))).isEqualTo(APPLY);
    }

    @Test
    void within_the_recorded_cycle_pages_up_to_the_recorded_one_are_skipped() {
        Position p = new Position(10L, 20, 2, 3, SyncType.DIFF);
        assertThat(p.decide(page(SyncType.DIFF, 10, 20, 1, 3))).isEqualTo(SKIP);
        assertThat(p.decide(page(SyncType.DIFF, 10, 20, 2, 3))).isEqualTo(SKIP);
        assertThat(p.decide(page(SyncType.DIFF, 10, 20, 3, 3))).isEqualTo(APPLY);
        assertThat(p.decide(page(SyncType.DIFF, 10, 25, 1, 1))).as("another cycle, an unfinished position")
                .isEqualTo(APPLY);
    }

    @Test
    void a_diff_covered_by_a_completed_position_is_skipped_and_a_later_one_applied() {
        Position p = new Position(10L, 20, 3, 3, SyncType.DIFF);
        assertThat(p.decide(page(SyncType.DIFF, 10, 20, 1, 2))).as("same range, other paging").isEqualTo(SKIP);
        assertThat(p.decide(page(SyncType.DIFF, 0, 15, 1, 1))).as("older").isEqualTo(SKIP);
        assertThat(p.decide(page(SyncType.DIFF, 10, 21, 1, 1))).isEqualTo(APPLY);
        assertThat(p.decide(page(SyncType.FULL, 0, 20, 1, 1))).as("a FULL export replaces the content")
                .isEqualTo(APPLY);
    }
}
