package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Real connections in deterministic interleavings, ordered by waiting on pg_locks. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ConcurrencyContract {

    /** The trigger mode under test; every scenario runs for both. */
    abstract TriggerMode mode();

    /** Where versions are kept; every scenario runs for each storage shape too. */
    HistoryStorage storage() {
        return HistoryStorage.HISTORY_TABLE;
    }


    private final DataSource ds;

    ConcurrencyContract(DataSource ds) {
        this.ds = ds;
    }

    @Test
    void two_transactions_racing_on_one_row_keep_the_chain_contiguous_and_every_period_positive() throws Exception {
        Db.exec(ds, "CREATE TABLE race (id int PRIMARY KEY, v int)");
        TemporalTable.forTable("race").triggerMode(mode()).storage(storage()).build().install(ds);
        Db.exec(ds, "INSERT INTO race VALUES (1, 0)");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection older = ds.getConnection(); Connection newer = ds.getConnection();
             Statement a = older.createStatement(); Statement b = newer.createStatement()) {
            older.setAutoCommit(false);
            newer.setAutoCommit(false);
            Instant olderNow = now(a);                 // the older transaction starts first...
            Instant newerNow = now(b);
            b.execute("UPDATE race SET v = 1 WHERE id = 1");   // ...the newer one writes first
            int olderPid = Waits.pid(older);
            Future<?> blocked = pool.submit(() -> {
                a.execute("UPDATE race SET v = 2 WHERE id = 1");
                older.commit();
                return null;
            });
            Waits.untilBlocked(ds, olderPid);
            newer.commit();
            blocked.get(30, TimeUnit.SECONDS);

            Versions v = Versions.of(ds, "race_history", "id = 1");
            assertThat(v.ops()).containsExactly(1, 2, 2);
            assertThat(olderNow).isBefore(newerNow);
            assertThat(v.get(1).from()).isEqualTo(newerNow);
            // The older transaction's now() is before the version it closes began: the clamp closes it 1 µs later.
            assertThat(v.get(1).to()).isEqualTo(newerNow.plus(Duration.ofNanos(1000)));
            assertThat(v.get(2).from()).isEqualTo(v.get(1).to());
            assertThat(v.get(2).get("v")).isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void a_repeatable_read_reinsert_that_cannot_see_a_concurrent_delete_fails_instead_of_overlapping()
            throws SQLException {
        repeatableReadReinsertAfterAnUnseenDelete("rr", false);
    }

    @Test
    void a_repeatable_read_reinsert_of_an_updated_key_that_cannot_see_a_concurrent_delete_fails_instead_of_overlapping()
            throws SQLException {
        repeatableReadReinsertAfterAnUnseenDelete("rr_updated", true);
    }

    private void repeatableReadReinsertAfterAnUnseenDelete(String table, boolean updatedBefore) throws SQLException {
        Db.exec(ds, "CREATE TABLE " + table + " (id int PRIMARY KEY, v int)");
        TemporalTable.forTable(table).triggerMode(mode()).storage(storage()).build().install(ds);
        Db.exec(ds, "INSERT INTO " + table + " VALUES (1, 0)");
        if (updatedBefore) {
            Db.exec(ds, "UPDATE " + table + " SET v = 1 WHERE id = 1");
        }
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            s.execute("SELECT count(*) FROM " + table); // takes the snapshot
            Db.exec(ds, "DELETE FROM " + table + " WHERE id = 1");
            if (storage() == HistoryStorage.CURRENT_IN_TABLE) {
                // An INSERT looks nothing up here: it succeeds, and its version is clamped where it is read. But it
                // cannot archive the version it started without seeing the chain it follows: changing it fails.
                // (v = 9 matches only the re-inserted row: the stale tuple the other transaction deleted would
                // make PostgreSQL itself raise the serialization error.)
                s.execute("INSERT INTO " + table + " VALUES (1, 9)");
                assertThatThrownBy(() -> s.execute("UPDATE " + table + " SET v = 10 WHERE id = 1 AND v = 9"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
                c.rollback();
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                s.execute("INSERT INTO " + table + " VALUES (1, 9)");
                c.commit();
            } else {
                assertThatThrownBy(() -> s.execute("INSERT INTO " + table + " VALUES (1, 9)"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
                c.rollback();
                Db.exec(ds, "INSERT INTO " + table + " VALUES (1, 9)"); // the application's retry
            }
        }
        Versions v = Versions.of(ds, table + "_history", "id = 1");
        int tombstone = updatedBefore ? 2 : 1;
        assertThat(v.ops()).containsExactlyElementsOf(updatedBefore ? List.of(1, 2, 3, 1) : List.of(1, 3, 1));
        assertThat(v.last().from()).as("starts no earlier than the tombstone").isAfterOrEqualTo(v.get(tombstone).to());
    }

    @Test
    void a_reinsert_waits_for_a_transaction_that_inserted_and_deleted_the_key_and_starts_after_it() throws Exception {
        Db.exec(ds, "CREATE TABLE flicker (id int PRIMARY KEY, v int)");
        TemporalTable.forTable("flicker").triggerMode(mode()).storage(storage()).build().install(ds);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection first = ds.getConnection(); Connection second = ds.getConnection();
             Statement a = first.createStatement(); Statement b = second.createStatement()) {
            second.setAutoCommit(false);
            first.setAutoCommit(false);
            now(b);                                                        // the second transaction starts first
            a.execute("INSERT INTO flicker VALUES (5, 1); UPDATE flicker SET v = 2 WHERE id = 5;"
                    + " DELETE FROM flicker WHERE id = 5");                 // a whole life of key 5, not committed
            int secondPid = Waits.pid(second);
            Future<?> insert = pool.submit(() -> {
                b.execute("INSERT INTO flicker VALUES (5, 9)");
                second.commit();
                return null;
            });
            Waits.untilBlocked(ds, secondPid);
            first.commit();
            insert.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        Versions v = Versions.of(ds, "flicker_history", "id = 5");
        assertThat(v.ops()).containsExactly(1, 2, 3, 1);
        assertThat(v.get(3).from()).as("the older transaction's insert is clamped after the tombstone")
                .isEqualTo(v.get(2).to());
        assertThat(v.rows().stream().map(r -> r.get("chain_no")).toList()).containsExactly(1, 1, 1, 2);
    }

    @Test
    void a_repeatable_read_insert_of_a_key_whose_whole_life_it_cannot_see_fails_with_a_serialization_error()
            throws SQLException {
        Db.exec(ds, "CREATE TABLE unseen (id int PRIMARY KEY, v int)");
        TemporalTable.forTable("unseen").triggerMode(mode()).storage(storage()).build().install(ds);
        Db.exec(ds, "CREATE TABLE unseen_ref (id int PRIMARY KEY, v int)");
        ReferenceShape ref = ReferenceShape.of("unseen_ref", "id", List.of("id", "v"));
        ref.install(ds, List.of("int", "int"));
        for (String table : List.of("unseen", "unseen_ref")) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                s.execute("SELECT count(*) FROM " + table);       // snapshot: key 7 has never existed
                Db.exec(ds, "BEGIN; INSERT INTO " + table + " VALUES (7, 1); DELETE FROM " + table
                        + " WHERE id = 7; COMMIT");
                if (table.equals("unseen") && storage() == HistoryStorage.CURRENT_IN_TABLE) {
                    // The insert succeeds (no function runs) and is clamped after the tombstone where it is read.
                    s.execute("INSERT INTO unseen VALUES (7, 2)");
                    c.commit();
                } else if (table.equals("unseen")) {
                    assertThatThrownBy(() -> s.execute("INSERT INTO unseen VALUES (7, 2)"))
                            .isInstanceOfSatisfying(SQLException.class,
                                    e -> assertThat(e.getSQLState()).isEqualTo("40001"));
                    c.rollback();
                } else {
                    s.execute("INSERT INTO unseen_ref VALUES (7, 2)");
                    c.commit();
                }
            }
        }
        assertThat(ref.checkerView().checkInvariants(ds)).as("reference").extracting(InvariantViolation::kind)
                .contains(InvariantViolation.Kind.OVERLAP);
        if (storage() != HistoryStorage.CURRENT_IN_TABLE) {
            Db.exec(ds, "INSERT INTO unseen VALUES (7, 2)"); // the retry
        }
        Versions v = Versions.of(ds, "unseen_history", "id = 7");
        assertThat(v.ops()).containsExactly(1, 3, 1);
        assertThat(v.get(2).from()).as("starts no earlier than the tombstone").isAfterOrEqualTo(v.get(1).to());
    }

    @Test
    void install_waits_for_writers_in_flight_and_holds_new_writers_until_the_trigger_is_in_place() throws Exception {
        Db.exec(ds, "CREATE TABLE busy (id int PRIMARY KEY, v int); INSERT INTO busy SELECT g, 0 FROM generate_series(1, 100) g");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (Connection inFlight = ds.getConnection(); Statement w = inFlight.createStatement()) {
            inFlight.setAutoCommit(false);
            w.execute("UPDATE busy SET v = 1 WHERE id = 1; INSERT INTO busy VALUES (101, 1)");
            Future<InstallReport> install = pool.submit(() -> TemporalTable.forTable("busy").triggerMode(mode()).storage(storage()).build().install(ds));
            Waits.untilWaitingOn(ds, "busy", 1);
            Future<?> late = pool.submit(() -> {
                Db.exec(ds, "UPDATE busy SET v = 2 WHERE id = 2; INSERT INTO busy VALUES (102, 2)");
                return null;
            });
            Waits.untilWaitingOn(ds, "busy", 2);
            inFlight.commit();
            assertThat(install.get(30, TimeUnit.SECONDS).seededRows()).as("the in-flight writes were seeded")
                    .isEqualTo(101);
            late.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(Versions.of(ds, "busy_history", "id = 1").ops()).containsExactly(1);
        assertThat(Versions.of(ds, "busy_history", "id = 2").ops()).as("the late writer was recorded")
                .containsExactly(1, 2);
        assertThat(Versions.of(ds, "busy_history", "id = 102").ops()).containsExactly(1);
        assertOpenVersionsMatchTable("busy");
    }

    @Test
    void install_in_the_middle_of_random_concurrent_writes_leaves_one_open_version_per_row() throws Exception {
        Db.exec(ds, "CREATE TABLE churn (id int PRIMARY KEY, v int); INSERT INTO churn SELECT g, 0 FROM generate_series(1, 200) g");
        int writers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger done = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        long seed = System.nanoTime();
        for (int w = 0; w < writers; w++) {
            Random random = new Random(seed + w);
            futures.add(pool.submit(() -> {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    for (int i = 0; i < 5_000 && !stop.get(); i++) {
                        int id = 1 + random.nextInt(250);
                        try {
                            switch (random.nextInt(3)) {
                                case 0 -> s.execute("UPDATE churn SET v = v + 1 WHERE id = " + id);
                                case 1 -> s.execute("DELETE FROM churn WHERE id = " + id);
                                default -> s.execute("INSERT INTO churn VALUES (" + id + ", 0) ON CONFLICT DO NOTHING");
                            }
                        } catch (SQLException e) {
                            throw new IllegalStateException("seed " + seed + ": " + e.getMessage(), e);
                        }
                        done.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        while (done.get() < 500) {
            Thread.onSpinWait(); // let the writers get going before installing
        }
        TemporalTable.forTable("churn").triggerMode(mode()).storage(storage()).build().install(ds);
        int afterInstall = done.get();
        while (done.get() < afterInstall + 500 && futures.stream().anyMatch(f -> !f.isDone())) {
            Thread.onSpinWait();
        }
        stop.set(true);
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(Db.count(ds, "SELECT count(*) FROM churn_history WHERE operation <> 1")).as("changes after install")
                .isPositive();
        assertOpenVersionsMatchTable("churn");
    }

    /** Every row of the table equals its one open version, and no other key has one. */
    private void assertOpenVersionsMatchTable(String table) {
        assertThat(Db.count(ds, "SELECT count(*) FROM (SELECT id, v FROM " + table + " EXCEPT ALL"
                + " SELECT id, v FROM " + table + "_history WHERE valid_to = 'infinity') d")).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM (SELECT id, v FROM " + table + "_history WHERE valid_to ="
                + " 'infinity' EXCEPT ALL SELECT id, v FROM " + table + ") d")).isZero();
    }

    private static Instant now(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT now()")) {
            rs.next();
            return rs.getTimestamp(1).toInstant();
        }
    }

}
