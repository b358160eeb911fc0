package io.tidemark.benchmarks.capture;

import io.tidemark.postgres.PostgresOutbox;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One of the write-cost benchmark's three identical tables, its outbox (none for the plain table) and where each
 * workload takes its keys from. Key ranges never overlap, so no workload meets another's rows:
 * <ul>
 *   <li>{@code [1, UPDATE_ROWS]}: seeded, updated by key (single rows at random, 1,000-row ranges in turn);</li>
 *   <li>from {@link #DELETE_FIRST}: seeded, deleted by key in order;</li>
 *   <li>from {@link #INSERT_FIRST}, {@link #BULK_FIRST}, {@link #WAL_FIRST}: new keys for the inserts.</li>
 * </ul>
 */
final class BenchTable {

    static final long UPDATE_ROWS = 100_000;
    static final long DELETE_FIRST = 10_000_000;
    static final long INSERT_FIRST = 100_000_000;
    static final long BULK_FIRST = 1_000_000_000;
    static final long WAL_FIRST = 5_000_000_000L;

    private final String label;
    private final String name;
    private final PostgresOutbox outbox;
    private final DataSource admin;
    private final DataSource writers;

    final AtomicLong nextInsertId = new AtomicLong(INSERT_FIRST);
    final AtomicLong nextBulkId = new AtomicLong(BULK_FIRST);
    final AtomicLong nextWalId = new AtomicLong(WAL_FIRST);
    final AtomicLong nextDeleteId = new AtomicLong(DELETE_FIRST);
    final AtomicLong bulkUpdateCursor = new AtomicLong();
    private volatile long deleteEnd = DELETE_FIRST;

    /** A table on the server whose superuser connections are {@code admin}; the writers connect to {@code writers}. */
    BenchTable(String label, String name, PostgresOutbox outbox, DataSource admin, DataSource writers) {
        this.label = label;
        this.name = name;
        this.outbox = outbox;
        this.admin = admin;
        this.writers = writers;
    }

    /** The connections the measured statements run on (the table's server, the writers' application name). */
    DataSource writers() {
        return writers;
    }

    String label() {
        return label;
    }

    String name() {
        return name;
    }

    /** The table's outbox; null for the plain table. */
    PostgresOutbox outbox() {
        return outbox;
    }

    boolean captured() {
        return outbox != null;
    }

    /** The next key to delete, or -1 when the seeded rows are used up. */
    long nextDeleteKey() {
        long id = nextDeleteId.getAndIncrement();
        return id < deleteEnd ? id : -1;
    }

    /**
     * Brings the table back to the state every round starts from: the seeded rows, an empty outbox, fresh
     * statistics. It runs with {@code session_replication_role = replica}, so that the capture triggers do not fire:
     * this is the benchmark resetting its own tables between rounds, not a write being measured (the outbox is
     * emptied along with the table, so nothing is left half-captured).
     */
    void reset(long deleteRows) throws SQLException {
        try (Connection c = admin.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET session_replication_role = replica");
            s.execute("TRUNCATE " + name + (captured() ? ", " + outbox.outboxTable() : ""));
            seed(c, 1, UPDATE_ROWS);
            seed(c, DELETE_FIRST, DELETE_FIRST + deleteRows - 1);
            s.execute("RESET session_replication_role");
            s.execute("VACUUM ANALYZE " + name);
            if (captured()) {
                s.execute("VACUUM ANALYZE " + outbox.outboxTable());
            }
        }
        nextDeleteId.set(DELETE_FIRST);
        deleteEnd = DELETE_FIRST + deleteRows;
        bulkUpdateCursor.set(0);
    }

    /**
     * Empties the outbox before a measurement, so that every cell starts from the same outbox whatever ran before
     * it (as a poller that keeps up would keep it). The benchmark has no reader; nothing is lost that anyone reads.
     */
    void emptyOutbox() throws SQLException {
        if (captured()) {
            CaptureBench.execute(admin, "TRUNCATE " + outbox.outboxTable());
        }
    }

    /**
     * Autovacuum off on the table and its outbox: it would start at random moments inside other cells and write
     * WAL into the WAL measurement. The tables are vacuumed by {@link #reset} at the start of every round instead.
     */
    void disableAutovacuum() throws SQLException {
        CaptureBench.execute(admin, "ALTER TABLE " + name + " SET (autovacuum_enabled = off)");
        if (captured()) {
            CaptureBench.execute(admin, "ALTER TABLE " + outbox.outboxTable() + " SET (autovacuum_enabled = off)");
        }
    }

    private void seed(Connection c, long from, long to) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO " + name + " " + CaptureBench.GENERATED_ROWS)) {
            s.setLong(1, from);
            s.setLong(2, to);
            s.executeUpdate();
        }
    }
}
