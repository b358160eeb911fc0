package io.tidemark.history.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.jdbc.JdbcWork;
import io.tidemark.sync.internal.jdbc.SqlContext;

import javax.sql.DataSource;
import java.sql.SQLException;

/**
 * History's work on the database through core's JDBC layer, with history's remedy for a missing privilege. A
 * connection failure is {@link ErrorCode#CONNECTION_FAILED}; any other failure names the table and what was being
 * done.
 */
public final class HistoryTransactions {

    private static final Jdbc.FailureMapper FAILURES = Jdbc.failures("Run it as the role that owns the table (see"
            + " the security model in the History README).", ErrorCode.DATABASE_ERROR);

    private HistoryTransactions() {
    }

    /** Runs {@code work} in one transaction and commits it; {@code doing} is a gerund phrase for messages. */
    public static <T> T inTransaction(DataSource dataSource, String object, String doing, JdbcWork<T> work) {
        return Jdbc.inTransaction(dataSource, SqlContext.of(dataSource, object, doing), FAILURES, work);
    }

    /**
     * Runs schema work (install, evolve, migrate, uninstall) in one READ COMMITTED transaction, whatever the
     * connection's default: each statement then sees what was committed before it, so what is read after the table
     * lock (rows to seed or migrate) includes every writer that committed while the lock was awaited. Under
     * REPEATABLE READ the snapshot would be taken by the first statement, before the lock, and miss them.
     */
    public static <T> T inSchemaTransaction(DataSource dataSource, String object, String doing, JdbcWork<T> work) {
        return inTransaction(dataSource, object, doing, c -> {
            Jdbc.execute(c, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
            return work.run(c);
        });
    }

    /** Runs read-only {@code work} in a transaction that is rolled back, so nothing it did can stay. */
    public static <T> T readOnly(DataSource dataSource, String object, String doing, JdbcWork<T> work) {
        return Jdbc.readOnly(dataSource, SqlContext.of(dataSource, object, doing), FAILURES, work);
    }

    /** Maps a failure of work on {@code dataSource} that did not go through the methods above. */
    public static TidemarkException translate(SQLException e, DataSource dataSource, String object, String doing) {
        return FAILURES.map(e, SqlContext.of(dataSource, object, doing));
    }
}
