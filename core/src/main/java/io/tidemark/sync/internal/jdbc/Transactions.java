package io.tidemark.sync.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The one transaction wrapper: work runs with auto-commit off, is committed when it returns and rolled back when it
 * throws, and the connection's own auto-commit mode (and isolation, where one is asked for) is restored either way,
 * so a pooled connection goes back as it came. Failures stay {@link SQLException}s: the caller knows what was being
 * done and maps them with {@link SqlErrors}.
 */
public final class Transactions {

    /** Keep the connection's isolation level. */
    public static final int CONNECTION_ISOLATION = -1;

    private Transactions() {
    }

    /** Runs {@code work} in one transaction on {@code connection} and commits it. */
    public static <T> T inTransaction(Connection connection, JdbcWork<T> work) throws SQLException {
        return inTransaction(connection, CONNECTION_ISOLATION, work);
    }

    /**
     * Runs {@code work} in one transaction at {@code isolation} (a {@link Connection} constant, or
     * {@link #CONNECTION_ISOLATION}) and commits it.
     */
    public static <T> T inTransaction(Connection connection, int isolation, JdbcWork<T> work) throws SQLException {
        return run(connection, isolation, work, true);
    }

    /** Runs read-only {@code work} in a transaction that is rolled back, so nothing it did can stay. */
    public static <T> T rolledBack(Connection connection, JdbcWork<T> work) throws SQLException {
        return run(connection, CONNECTION_ISOLATION, work, false);
    }

    /**
     * Runs {@code work} with auto-commit on, each statement its own transaction, and restores the connection's
     * mode. For calls that must not run inside a transaction of Tidemark's (a SQL Server procedure that opens its
     * own snapshot transaction).
     */
    public static <T> T autoCommitted(Connection c, JdbcWork<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        if (!autoCommit) {
            c.setAutoCommit(true);
        }
        try {
            return work.run(c);
        } finally {
            if (!autoCommit) {
                c.setAutoCommit(false);
            }
        }
    }

    private static <T> T run(Connection c, int isolation, JdbcWork<T> work, boolean commit) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        int previousIsolation = isolation == CONNECTION_ISOLATION ? CONNECTION_ISOLATION : c.getTransactionIsolation();
        try {
            c.setAutoCommit(false);
            if (isolation != CONNECTION_ISOLATION) {
                c.setTransactionIsolation(isolation);
            }
            T result = work.run(c);
            if (commit) {
                c.commit();
            } else {
                c.rollback();
            }
            return result;
        } catch (SQLException | RuntimeException e) {
            rollbackQuietly(c, e);
            throw e;
        } finally {
            restore(c, autoCommit, previousIsolation);
        }
    }

    /** Rolls back, keeping a failure of the rollback itself as suppressed by the failure that caused it. */
    public static void rollbackQuietly(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }

    private static void restore(Connection c, boolean autoCommit, int isolation) {
        try {
            if (isolation != CONNECTION_ISOLATION) {
                c.setTransactionIsolation(isolation);
            }
            c.setAutoCommit(autoCommit);
        } catch (SQLException ignored) {
            // The caller closes the connection next; a broken one is discarded by the pool.
        }
    }
}
