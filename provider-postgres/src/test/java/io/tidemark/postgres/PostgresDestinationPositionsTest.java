package io.tidemark.postgres;

import io.tidemark.sync.DestinationReport;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Independent destination positions through a real change function and {@link JdbcWatermarkStore} on PostgreSQL,
 * including the migration of a store written before positions were kept.
 */
@EmbeddedPostgresTest
class PostgresDestinationPositionsTest {

    private static final AtomicInteger FUNCTIONS = new AtomicInteger();

    private final TestDatabase database;

    PostgresDestinationPositionsTest(TestDatabase database) {
        this.database = database;
    }

    private RowsFunction rows() {
        return RowsFunction.create(database, "positions_rows_" + FUNCTIONS.incrementAndGet(), true);
    }

    private static List<Long> versions(RecordingDestination d) {
        return d.changes().stream().map(c -> c.version().orElseThrow()).toList();
    }

    @Test
    void a_store_from_before_positions_gains_the_table_and_every_destination_starts_at_its_watermark() {
        RowsFunction fn = rows().insert(1, 6);
        // The tables as an older Tidemark created them, with a watermark of 4 (without a source yet).
        database.execute("CREATE SCHEMA legacy_store;\n"
                + "CREATE TABLE legacy_store.sync_state (object_name text PRIMARY KEY, version bigint,"
                + " source_identity text, paused boolean NOT NULL DEFAULT false, last_moved_at timestamptz,"
                + " last_polled_at timestamptz, last_error text, updated_at timestamptz NOT NULL DEFAULT now());\n"
                + "INSERT INTO legacy_store.sync_state (object_name, version) VALUES ('" + fn.name() + "', 4);");

        JdbcWatermarkStore store = JdbcWatermarkStore.builder(database.dataSource()).schema("legacy_store").build();
        WatermarkState before = store.load(fn.name()).orElseThrow();
        assertThat(before.version()).hasValue(4);
        assertThat(before.positions()).isEmpty();

        RecordingDestination healthy = new RecordingDestination();
        RecordingDestination refusing = new RecordingDestination().refuseAll();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(store)
                .track(TrackedObject.of(fn.name(), fn.name()))
                .destination("healthy", healthy)
                .destination("refusing", refusing)
                .build()) {

            ObjectReport report = engine.runOnce(fn.name());

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.destinations()).extracting(DestinationReport::outcome)
                    .containsExactly(Outcome.DELIVERED, Outcome.BLOCKED);
            assertThat(versions(healthy)).containsExactly(5L, 6L);
            WatermarkState after = store.load(fn.name()).orElseThrow();
            assertThat(after.positions()).containsOnlyKeys("healthy", "refusing");
            assertThat(after.positions().get("healthy").version()).isEqualTo(6L);
            assertThat(after.positions().get("refusing").version()).isEqualTo(4L);
            assertThat(after.version()).hasValue(4);
            assertThat(after.source()).isPresent();

            refusing.acceptAll();
            engine.runOnce(fn.name());

            assertThat(versions(refusing)).containsExactly(5L, 6L);
            assertThat(store.load(fn.name()).orElseThrow().version()).hasValue(6);
        }
        assertThat(fn.calls()).containsExactly(
                "{\"fromVersion\":4,\"mode\":\"sync\"}",
                "{\"fromVersion\":6,\"mode\":\"sync\"}",
                "{\"fromVersion\":4,\"mode\":\"sync\"}");
        database.execute("DO $$ BEGIN ASSERT (SELECT count(*) FROM legacy_store.sync_state_positions) = 2; END $$;");
    }

    @Test
    void healthy_destinations_keep_receiving_while_one_is_down_and_it_catches_up_from_its_own_position() {
        RowsFunction fn = rows().insert(1, 3);
        JdbcWatermarkStore store = JdbcWatermarkStore.create(database.dataSource());
        RecordingDestination a = new RecordingDestination();
        RecordingDestination b = new RecordingDestination();
        RecordingDestination down = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(store)
                .track(TrackedObject.of(fn.name(), fn.name()).maxRows(2))
                .destination("a", a).destination("b", b).destination("down", down)
                .build()) {
            engine.runOnce(fn.name());
            engine.runOnce(fn.name());
            down.refuseAll();
            for (int batch = 0; batch < 4; batch++) {
                fn.insert(4 + batch * 2L, 5 + batch * 2L);
                engine.runOnce(fn.name());
            }
            assertThat(versions(a)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L);
            assertThat(versions(b)).isEqualTo(versions(a));
            assertThat(versions(down)).containsExactly(1L, 2L, 3L);
            DestinationPosition stuck = store.load(fn.name()).orElseThrow().positions().get("down");
            assertThat(stuck.version()).isEqualTo(3L);
            assertThat(store.load(fn.name()).orElseThrow().version()).hasValue(3);

            down.acceptAll();
            for (int i = 0; i < 5; i++) {
                engine.runOnce(fn.name());
            }
            assertThat(versions(down)).isEqualTo(versions(a));
            assertThat(store.load(fn.name()).orElseThrow().version()).hasValue(11);
        }
    }
}
