package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The randomised stress run of issue 4: 8 writers on 50 hot keys, at least 20,000 committed transactions of
 * updates (some changing nothing), deletes, re-inserts and key changes, with and without change context, in READ
 * COMMITTED and REPEATABLE READ. Afterwards the invariant checker finds nothing and every row equals its open
 * version. The seed is logged; set -Dtidemark.stress.seed=N to replay one.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class StressContract {

    /** The trigger mode under test; every scenario runs for both. */
    abstract TriggerMode mode();

    /** Where versions are kept; every scenario runs for each storage shape too. */
    HistoryStorage storage() {
        return HistoryStorage.HISTORY_TABLE;
    }


    private static final Logger LOG = LoggerFactory.getLogger(StressContract.class);
    private static final int WRITERS = 8;
    private static final int KEYS = 50;
    private static final int TRANSACTIONS = 20_000;
    /** Expected refusals under contention: unique violation, serialization failure, deadlock. */
    private static final Set<String> RETRYABLE = Set.of("23505", "40001", "40P01");

    @Test
    void eight_writers_on_fifty_hot_keys_leave_a_history_without_a_single_broken_invariant(DataSource ds)
            throws Exception {
        Db.exec(ds, "CREATE TABLE hot (id int PRIMARY KEY, v int NOT NULL, note text);"
                + " INSERT INTO hot SELECT g, 0, NULL FROM generate_series(1, " + KEYS + ") g");
        TemporalTable hot = TemporalTable.forTable("hot").triggerMode(mode()).storage(storage()).build();
        hot.install(ds);
        long seed = Long.getLong("tidemark.stress.seed", System.nanoTime());
        LOG.info("stress seed {}", seed);
        AtomicInteger committed = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        List<Future<?>> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            Random random = new Random(seed + w);
            writers.add(pool.submit(() -> write(ds, random, committed, refused, seed)));
        }
        for (Future<?> writer : writers) {
            writer.get(10, TimeUnit.MINUTES);
        }
        pool.shutdown();
        LOG.info("stress: {} transactions committed, {} refused and rolled back", committed.get(), refused.get());

        assertThat(committed.get()).isGreaterThanOrEqualTo(TRANSACTIONS);
        assertThat(hot.checkInvariants(ds)).as("seed " + seed).isEmpty();
        assertThat(Db.count(ds, "SELECT count(*) FROM (SELECT id, v, note FROM hot EXCEPT ALL SELECT id, v, note"
                + " FROM hot_history WHERE valid_to = 'infinity') d")).as("seed " + seed).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM (SELECT id, v, note FROM hot_history WHERE valid_to ="
                + " 'infinity' EXCEPT ALL SELECT id, v, note FROM hot) d")).as("seed " + seed).isZero();
        assertThat(Db.count(ds, "SELECT count(DISTINCT operation) FROM hot_history")).isEqualTo(3);
        assertThat(Db.count(ds, "SELECT count(*) FROM hot_history WHERE changed_by IS NOT NULL")).isPositive();
    }

    private Void write(DataSource ds, Random random, AtomicInteger committed, AtomicInteger refused, long seed)
            throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement update = c.prepareStatement("UPDATE hot SET v = v + ? WHERE id = ?");
             // A quarter of the deletes take three keys: several rows in one statement (one transition table).
             PreparedStatement delete = c.prepareStatement("DELETE FROM hot WHERE id BETWEEN ? AND ?");
             PreparedStatement insert = c.prepareStatement("INSERT INTO hot VALUES (?, ?, ?) ON CONFLICT DO NOTHING");
             PreparedStatement rekey = c.prepareStatement("UPDATE hot SET id = ? WHERE id = ?");
             PreparedStatement context = c.prepareStatement("SELECT set_config('tidemark.changed_by', ?, true),"
                     + " set_config('tidemark.reason', ?, true)")) {
            c.setAutoCommit(false);
            while (committed.get() < TRANSACTIONS) {
                try {
                    c.setTransactionIsolation(random.nextInt(4) == 0 ? Connection.TRANSACTION_REPEATABLE_READ
                            : Connection.TRANSACTION_READ_COMMITTED);
                    if (random.nextBoolean()) {
                        context.setString(1, "writer-" + Thread.currentThread().getName());
                        context.setString(2, random.nextBoolean() ? "stress" : "");
                        context.executeQuery().close();
                    }
                    int operations = 1 + random.nextInt(3);
                    for (int i = 0; i < operations; i++) {
                        int id = 1 + random.nextInt(KEYS);
                        int dice = random.nextInt(100);
                        if (dice < 45) {
                            update.setInt(1, dice < 8 ? 0 : 1); // some updates change nothing
                            update.setInt(2, id);
                            update.executeUpdate();
                        } else if (dice < 65) {
                            delete.setInt(1, id);
                            delete.setInt(2, dice < 50 ? id + 2 : id);
                            delete.executeUpdate();
                        } else if (dice < 92) {
                            insert.setInt(1, id);
                            insert.setInt(2, random.nextInt(10));
                            insert.setString(3, random.nextBoolean() ? null : "n" + random.nextInt(5));
                            insert.executeUpdate();
                        } else {
                            rekey.setInt(1, 1 + random.nextInt(KEYS));
                            rekey.setInt(2, id);
                            rekey.executeUpdate();
                        }
                    }
                    c.commit();
                    committed.incrementAndGet();
                } catch (SQLException e) {
                    c.rollback();
                    if (!RETRYABLE.contains(e.getSQLState())) {
                        throw new IllegalStateException("seed " + seed + ": unexpected " + e.getSQLState() + " "
                                + e.getMessage(), e);
                    }
                    refused.incrementAndGet();
                }
            }
        }
        return null;
    }
}
