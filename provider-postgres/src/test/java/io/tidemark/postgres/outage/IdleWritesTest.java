package io.tidemark.postgres.outage;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.ObjectStatus;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An idle object writes nothing to the watermark store: no UPDATE per poll (which would also take a transaction id
 * and move the horizon an outbox reports), "last moved" stands still, and "last polled" is still known.
 */
@EmbeddedPostgresTest
class IdleWritesTest {

    private static final Duration INTERVAL = Duration.ofMillis(100);
    private static final Duration IDLE = Duration.ofSeconds(10);

    private final TestDatabase database;

    IdleWritesTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void an_idle_engine_polling_every_100_ms_for_10_s_writes_nothing_to_the_store() throws Exception {
        database.execute("""
                CREATE FUNCTION public.idle_changes(payload json) RETURNS json LANGUAGE sql AS $$
                  SELECT '{"Metadata":{"Sync":{"Version":5,"Type":"Diff","ReasonCode":0}},"Data":[]}'::json
                $$""");
        JdbcWatermarkStore store = JdbcWatermarkStore.create(database.dataSource());
        AtomicInteger cycles = new AtomicInteger();
        SyncEngine engine = SyncEngine.builder()
                .name("idle")
                .provider(PostgresProvider.builder(database.dataSource()).listen(false).build())
                .watermarks(store)
                .track(TrackedObject.of("Idle", "public.idle_changes").pollInterval(INTERVAL))
                .destination("out", new RecordingDestination())
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        cycles.incrementAndGet();
                    }
                })
                .build();
        try (engine) {
            assertThat(engine.runOnce("Idle").isSuccess()).isTrue(); // the first cycle stores version 5
            WatermarkState first = store.load("Idle").orElseThrow();
            String rowVersion = rowVersion();
            long writesBefore = writes();

            engine.start();
            // At least the idle stretch, and at least 50 polls: on a loaded machine 10 s may hold fewer.
            long started = System.nanoTime();
            while ((System.nanoTime() - started < IDLE.toNanos() || cycles.get() - 1 <= 50)
                    && System.nanoTime() - started < IDLE.multipliedBy(6).toNanos()) {
                Thread.sleep(100);
            }
            int polls = cycles.get() - 1;
            engine.close();

            assertThat(polls).as("polls while idle").isGreaterThan(50);
            assertThat(writes() - writesBefore).as("rows inserted, updated or deleted in the store").isZero();
            assertThat(rowVersion()).as("the row's xmin and ctid").isEqualTo(rowVersion);
            WatermarkState stored = store.load("Idle").orElseThrow();
            assertThat(stored.lastMovedAt()).isEqualTo(first.lastMovedAt());
            ObjectStatus status = engine.status("Idle");
            assertThat(status.stored().lastPolledAt().orElseThrow())
                    .as("last polled, as this engine knows it").isAfter(first.lastPolledAt().orElseThrow()
                            .plus(IDLE.minusSeconds(2)));
            assertThat(status.stored().lastMovedAt()).isEqualTo(first.lastMovedAt());
        }
    }

    /** The row's physical version: any UPDATE gives it another xmin and ctid. */
    private String rowVersion() throws SQLException {
        return query("SELECT xmin::text || ' ' || ctid::text FROM tidemark.sync_state WHERE object_name = 'Idle'");
    }

    /**
     * Inserts, updates and deletes on the store's table since the statistics were last reset, as PostgreSQL counts
     * them. The engine's connections end after each call (a plain data source), and a backend flushes its counts when
     * it ends; the wait lets the last ones arrive (PostgreSQL 14 sends them to its collector asynchronously).
     */
    private long writes() throws SQLException, InterruptedException {
        Thread.sleep(1500);
        return Long.parseLong(query("""
                SELECT n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables
                 WHERE schemaname = 'tidemark' AND relname = 'sync_state'"""));
    }

    private String query(String sql) throws SQLException {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("SELECT pg_stat_clear_snapshot()");
            try (ResultSet rs = s.executeQuery(sql)) {
                assertThat(rs.next()).isTrue();
                return rs.getString(1);
            }
        }
    }
}
