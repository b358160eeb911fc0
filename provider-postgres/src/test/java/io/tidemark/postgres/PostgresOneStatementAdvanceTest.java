package io.tidemark.postgres;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The PostgreSQL store writes a watermark and its destinations' positions in one statement without a transaction
 * around it: all of it or nothing, also when another writer changes one of its rows while it runs. Each test holds a
 * row in a transaction of its own, lets the store's write block on it, then commits a change that makes the write
 * stale: the write must then change nothing and say why.
 */
@EmbeddedPostgresTest
class PostgresOneStatementAdvanceTest {

    private static final String SOURCE = "public.items_changes";
    private static final Instant T1 = Instant.parse("2026-01-01T00:00:00Z");
    private static final Instant T2 = Instant.parse("2026-01-01T00:01:00Z");

    private static final String ONE_STATEMENT = "WITH moves AS (";

    private final TestDatabase database;
    private final StatementLog log;
    private final JdbcWatermarkStore store;

    PostgresOneStatementAdvanceTest(TestDatabase database) {
        this.database = database;
        this.log = new StatementLog(database.dataSource());
        this.store = JdbcWatermarkStore.create(log);
    }

    @Test
    void a_write_waiting_on_the_objects_row_moved_by_another_writer_moves_no_position() throws Exception {
        String name = "waits-on-state";
        seed(name);
        assertConflict(advanceBehind(name,
                "UPDATE tidemark.sync_state SET version = 7 WHERE object_name = '" + name + "'", () -> { }));
        WatermarkState state = store.load(name).orElseThrow();
        assertThat(state.version()).hasValue(7);
        assertThat(state.positions().get("a").position()).as("not moved by the refused write").hasValue(5);
        assertThat(state.positions().get("b").position()).hasValue(5);
    }

    @Test
    void a_write_waiting_on_a_position_moved_by_another_writer_moves_nothing() throws Exception {
        String name = "waits-on-position";
        seed(name);
        assertConflict(advanceBehind(name, "UPDATE tidemark.sync_state_positions SET version = 6"
                + " WHERE object_name = '" + name + "' AND destination = 'b'", () -> {
                    try (Connection third = database.dataSource().getConnection()) {
                        third.setAutoCommit(false);
                        execute(third, "SELECT 1 FROM tidemark.sync_state WHERE object_name = '" + name + "'"
                                + " FOR UPDATE NOWAIT");
                        third.rollback(); // the row of the object is not locked while the write waits for a position
                    }
                }));
        WatermarkState state = store.load(name).orElseThrow();
        assertThat(state.version()).as("the watermark stays").hasValue(5);
        assertThat(state.positions().get("a").position()).as("not moved by the refused write").hasValue(5);
        assertThat(state.positions().get("b").position()).hasValue(6);
    }

    @Test
    void a_write_waiting_on_a_row_another_writer_left_as_it_was_goes_ahead_whole() throws Exception {
        String name = "waits-on-nothing";
        seed(name);
        log.start();
        advanceBehind(name, "UPDATE tidemark.sync_state SET last_error = 'held' WHERE object_name = '" + name + "'",
                () -> { }).get(30, TimeUnit.SECONDS);
        assertThat(log.stop()).as("written by the one statement, not by the transaction after it")
                .singleElement().asString().startsWith(ONE_STATEMENT);
        WatermarkState state = store.load(name).orElseThrow();
        assertThat(state.version()).hasValue(9);
        assertThat(state.positions().get("a").position()).hasValue(9);
        assertThat(state.positions().get("b").position()).hasValue(8);
    }

    @Test
    void a_watermark_stored_without_a_source_adopts_the_writers_in_the_one_statement() {
        String name = "no-source";
        database.execute("INSERT INTO tidemark.sync_state (object_name, version) VALUES ('" + name + "', 5)");

        log.start();
        store.advance(name, SOURCE, OptionalLong.of(5), 6, List.of(), T2);
        assertThat(log.stop()).singleElement().asString().startsWith(ONE_STATEMENT);

        WatermarkState state = store.load(name).orElseThrow();
        assertThat(state.version()).hasValue(6);
        assertThat(state.source()).hasValue(SOURCE);
        assertThat(state.lastMovedAt()).hasValue(T2);
    }

    /** Watermark 5, destinations "a" and "b" at 5 (the first write stores the positions, in a transaction). */
    private void seed(String name) {
        store.advance(name, SOURCE, OptionalLong.empty(), 5, List.of(first("a", 5), first("b", 5)), T1);
    }

    /** What a test does while the write waits for the other writer. */
    private interface WhileWaiting {
        void run() throws Exception;
    }

    /**
     * The write under test (from 5, "a" to 9 and "b" to 8), started while another writer holds the row {@code held}
     * changes in a transaction; once the write waits for that row, runs {@code whileWaiting}, then commits the
     * other writer. Returns the write, done or about to be.
     */
    private CompletableFuture<Void> advanceBehind(String name, String held, WhileWaiting whileWaiting)
            throws Exception {
        try (Connection other = database.dataSource().getConnection()) {
            other.setAutoCommit(false);
            execute(other, held);
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> store.advance(name, SOURCE,
                    OptionalLong.of(5), 9, List.of(from("a", 5, 9), from("b", 5, 8)), T2));
            awaitBlocked(write);
            whileWaiting.run();
            other.commit();
            return write;
        }
    }

    /** Until the store's statement waits for a lock (it cannot finish before the other writer ends). */
    private void awaitBlocked(CompletableFuture<Void> write) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!waitingForALock()) {
            assertThat(write).as("the write waits for the other writer's row").isNotDone();
            assertThat(System.nanoTime()).as("the write reaches the lock").isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    private boolean waitingForALock() {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_catalog.pg_stat_activity"
                     + " WHERE wait_event_type = 'Lock' AND query LIKE '%WITH moves AS%'")) {
            rs.next();
            return rs.getLong(1) > 0;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void assertConflict(CompletableFuture<Void> write) {
        assertThatThrownBy(() -> write.get(30, TimeUnit.SECONDS))
                .cause()
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.WATERMARK_CONFLICT));
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static PositionAdvance first(String destination, long version) {
        return new PositionAdvance(destination, OptionalLong.empty(), version);
    }

    private static PositionAdvance from(String destination, long expected, long version) {
        return new PositionAdvance(destination, OptionalLong.of(expected), version);
    }
}
