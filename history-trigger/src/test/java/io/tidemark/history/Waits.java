package io.tidemark.history;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * Deterministic interleavings: wait until the server reports that a session is blocked on a lock, by polling
 * pg_locks (never by sleeping and hoping).
 */
public final class Waits {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private Waits() {
    }

    public static int pid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Waits until backend {@code pid} waits for a lock that is not granted. */
    public static void untilBlocked(DataSource ds, int pid) {
        until(ds, "SELECT count(*) FROM pg_locks WHERE pid = " + pid + " AND NOT granted", 1,
                "backend " + pid + " to wait for a lock");
    }

    /** Waits until at least {@code sessions} sessions wait for a lock on {@code table}. */
    public static void untilWaitingOn(DataSource ds, String table, int sessions) {
        until(ds, "SELECT count(*) FROM pg_locks WHERE relation = '" + table + "'::regclass AND NOT granted",
                sessions, sessions + " session(s) to wait for a lock on " + table);
    }

    private static void until(DataSource ds, String countSql, long atLeast, String what) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            while (true) {
                try (ResultSet rs = s.executeQuery(countSql)) {
                    rs.next();
                    if (rs.getLong(1) >= atLeast) {
                        return;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("Timed out after " + TIMEOUT + " waiting for " + what);
                }
                Thread.onSpinWait();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
