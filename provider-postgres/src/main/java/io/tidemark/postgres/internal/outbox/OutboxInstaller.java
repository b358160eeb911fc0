package io.tidemark.postgres.internal.outbox;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.PostgresVersions;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.internal.jdbc.SqlErrors;
import io.tidemark.sync.internal.jdbc.Transactions;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

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
        run(dataSource, "install the outbox of " + table, connection -> {
            PostgresVersions.requireSupported(connection, table, "the outbox");
            Jdbc.execute(connection, source.script(connection));
        });
    }

    public static void uninstall(DataSource dataSource, OutboxNames names) {
        String table = names.table().quoted();
        // The table may be gone already; its triggers went with it.
        String dropTriggers = Stream.of(names.insertTrigger(), names.updateTrigger(), names.deleteTrigger(),
                        names.truncateTrigger())
                .map(trigger -> SqlTemplate.of("    DROP TRIGGER IF EXISTS {{trigger}} ON {{table}};\n")
                        .with("trigger", PgName.quote(trigger)).with("table", table).render())
                .collect(Collectors.joining());
        String sql = SqlTemplate.of("""
                DO $uninstall$ BEGIN
                  IF to_regclass({{table_literal}}) IS NOT NULL THEN
                {{drop_triggers}}  END IF;
                END $uninstall$;
                DROP FUNCTION IF EXISTS {{change_function}}(json);
                DROP FUNCTION IF EXISTS {{request_function}}(json);
                DROP FUNCTION IF EXISTS {{trim_function}}(bigint, integer);
                DROP FUNCTION IF EXISTS {{capture_function}}();
                DROP FUNCTION IF EXISTS {{arm_function}}();
                DROP TABLE IF EXISTS {{wakeup}};
                DROP VIEW IF EXISTS {{guard_view}};
                DROP TABLE IF EXISTS {{state}};
                DROP TABLE IF EXISTS {{outbox}};
                """)
                .with("table_literal", PgName.literal(table))
                .with("drop_triggers", dropTriggers)
                .with("change_function", names.changeFunction().quoted())
                .with("request_function", names.requestFunction().quoted())
                .with("trim_function", names.trimFunction().quoted())
                .with("capture_function", names.captureFunction().quoted())
                .with("arm_function", names.armFunction().quoted())
                .with("wakeup", names.wakeUp().quoted())
                .with("guard_view", names.guardView().quoted())
                .with("state", names.state().quoted())
                .with("outbox", names.outbox().quoted())
                .render();
        run(dataSource, "uninstall the outbox of " + names.table(), connection -> Jdbc.execute(connection, sql));
    }

    /** Runs {@code work} in one READ COMMITTED transaction; {@code what} completes "Could not ..." in messages. */
    private static void run(DataSource dataSource, String what, Work work) {
        try (Connection connection = dataSource.getConnection()) {
            Transactions.inTransaction(connection, Connection.TRANSACTION_READ_COMMITTED, c -> {
                work.run(c);
                return null;
            });
        } catch (SQLException e) {
            throw failure(dataSource, what, e);
        }
    }

    private interface Work {
        void run(Connection connection) throws SQLException;
    }

    /**
     * Maps a failed statement on {@code dataSource} to an error that says what to do; {@code what} completes
     * "Could not ...".
     */
    public static TidemarkException failure(DataSource dataSource, String what, SQLException e) {
        TidemarkException connection = SqlErrors.connectionFailure(e,
                SqlContext.of(dataSource, null, "trying to " + what));
        if (connection != null) {
            return connection;
        }
        String detail = SqlErrors.detail(e);
        switch (SqlErrors.state(e)) {
            case "42501":
                return new TidemarkException(ErrorCode.PERMISSION_DENIED, "Could not " + what + ": " + detail
                        + ". The role must own the table (or hold TRIGGER on it) and may create objects in the"
                        + " outbox's schema.", e);
            case "P0001": // RAISE EXCEPTION in the preflight
            case "42P01": // undefined_table
            case "42703": // undefined_column
                return new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "Could not " + what + ": " + detail, e);
            default:
                return new TidemarkException(ErrorCode.DATABASE_ERROR, "Could not " + what + ": " + detail, e);
        }
    }
}
