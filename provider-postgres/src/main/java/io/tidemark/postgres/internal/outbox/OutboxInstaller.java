package io.tidemark.postgres.internal.outbox;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.PostgresVersions;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** Runs an outbox script in one READ COMMITTED transaction, and maps what the server says to what to do. */
public final class OutboxInstaller {

    /** Produces the script on the connection that will run it (reading the catalog where needed). */
    @FunctionalInterface
    public interface ScriptSource {
        String script(Connection connection) throws SQLException;
    }

    private OutboxInstaller() {
    }

    public static void install(DataSource dataSource, String table, ScriptSource source) {
        inTransaction(dataSource, "install the outbox of " + table, connection -> {
            PostgresVersions.requireSupported(connection, table, "the outbox");
            try (Statement s = connection.createStatement()) {
                s.execute(source.script(connection));
            }
        });
    }

    public static void uninstall(DataSource dataSource, OutboxNames names) {
        String table = names.table().quoted();
        StringBuilder sql = new StringBuilder();
        // The table may be gone already; its triggers went with it.
        sql.append("DO $uninstall$ BEGIN\n  IF to_regclass(").append(io.tidemark.sync.sql.PgName.literal(table))
                .append(") IS NOT NULL THEN\n");
        for (String trigger : new String[] {names.insertTrigger(), names.updateTrigger(), names.deleteTrigger(),
                names.truncateTrigger()}) {
            sql.append("    DROP TRIGGER IF EXISTS ").append(io.tidemark.sync.sql.PgName.quote(trigger))
                    .append(" ON ").append(table).append(";\n");
        }
        sql.append("  END IF;\nEND $uninstall$;\n")
                .append("DROP FUNCTION IF EXISTS ").append(names.changeFunction().quoted()).append("(json);\n")
                .append("DROP FUNCTION IF EXISTS ").append(names.requestFunction().quoted()).append("(json);\n")
                .append("DROP FUNCTION IF EXISTS ").append(names.trimFunction().quoted()).append("(bigint, integer);\n")
                .append("DROP FUNCTION IF EXISTS ").append(names.captureFunction().quoted()).append("();\n")
                .append("DROP VIEW IF EXISTS ").append(names.guardView().quoted()).append(";\n")
                .append("DROP TABLE IF EXISTS ").append(names.state().quoted()).append(";\n")
                .append("DROP TABLE IF EXISTS ").append(names.outbox().quoted()).append(";\n");
        inTransaction(dataSource, "uninstall the outbox of " + names.table(), connection -> {
            try (Statement s = connection.createStatement()) {
                s.execute(sql.toString());
            }
        });
    }

    private interface Work {
        void run(Connection connection) throws SQLException;
    }

    private static void inTransaction(DataSource dataSource, String what, Work work) {
        try (Connection connection = dataSource.getConnection()) {
            boolean autoCommit = connection.getAutoCommit();
            int isolation = connection.getTransactionIsolation();
            try {
                connection.setAutoCommit(false);
                connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                work.run(connection);
                connection.commit();
            } catch (SQLException | RuntimeException e) {
                try {
                    connection.rollback();
                } catch (SQLException rollback) {
                    e.addSuppressed(rollback);
                }
                throw e;
            } finally {
                connection.setTransactionIsolation(isolation);
                connection.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw failure(what, e);
        }
    }

    /** Maps a failed statement to an error that says what to do. */
    public static TidemarkException failure(String what, SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String detail = e.getMessage() + (state.isEmpty() ? "" : " (SQLState " + state + ")");
        switch (state) {
            case "42501":
                return new TidemarkException(ErrorCode.PERMISSION_DENIED, "Could not " + what + ": " + detail
                        + ". The role must own the table (or hold TRIGGER on it) and may create objects in the"
                        + " outbox's schema.", e);
            case "P0001": // RAISE EXCEPTION in the preflight
            case "42P01": // undefined_table
            case "42703": // undefined_column
                return new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "Could not " + what + ": " + detail, e);
            default:
                return new TidemarkException(ErrorCode.INTERNAL, "Could not " + what + ": " + detail, e);
        }
    }
}
