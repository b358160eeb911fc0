package io.tidemark.history;

import io.tidemark.history.internal.context.ContextSql;
import io.tidemark.history.internal.context.ContextualConnection;
import io.tidemark.history.internal.context.SettingsPrefix;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.jdbc.JdbcTarget;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.internal.jdbc.SqlErrors;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * The plain-JDBC integration: a {@link DataSource} whose connections hand the current {@link ChangeContext} to
 * the history trigger, in the same round trip as the statement that writes.
 *
 * <pre>{@code
 * DataSource app = ContextualDataSource.wrap(pool);              // reads ChangeContext.current()
 * ChangeContext.runWith(ChangeContext.changedBy("alice"), () -> {
 *     try (Connection c = app.getConnection(); PreparedStatement ps = c.prepareStatement(
 *             "UPDATE policies SET premium = ? WHERE id = ?")) { ... ps.executeUpdate(); }
 * });
 * }</pre>
 *
 * <p>In auto-commit mode a non-empty context is sent with each statement (both run in one implicit transaction);
 * inside a transaction it is sent whenever it differs from what was last sent in that transaction, absent values
 * included, so nothing is inherited from an earlier unit of work. Batches and generated-key statements push in a
 * round trip of their own. Works with the PostgreSQL JDBC driver, which runs several statements sent together.
 */
public final class ContextualDataSource implements DataSource {

    private final DataSource delegate;
    private final Supplier<ChangeContext> source;
    private final ContextSql sql;

    private ContextualDataSource(DataSource delegate, Supplier<ChangeContext> source, String settingsPrefix) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.source = Objects.requireNonNull(source, "source");
        this.sql = new ContextSql(checkedPrefix(settingsPrefix));
    }

    /** Wraps {@code delegate}; the context is {@link ChangeContext#current()}, the prefix {@code tidemark}. */
    public static ContextualDataSource wrap(DataSource delegate) {
        return new ContextualDataSource(delegate, ChangeContext::current, TemporalTable.DEFAULT_SETTINGS_PREFIX);
    }

    /** Wraps {@code delegate} with a context source of your own (a request scope, a security context, ...). */
    public static ContextualDataSource wrap(DataSource delegate, Supplier<ChangeContext> source, String settingsPrefix) {
        return new ContextualDataSource(delegate, source, settingsPrefix);
    }

    /** Wraps one connection (from a pool you manage) the same way. */
    public static Connection wrap(Connection connection, Supplier<ChangeContext> source, String settingsPrefix) {
        return ContextualConnection.wrap(Objects.requireNonNull(connection, "connection"),
                Objects.requireNonNull(source, "source"), checkedPrefix(settingsPrefix));
    }

    /**
     * Pushes {@code context} on {@code connection} now, in a statement of its own (one round trip). The settings
     * last until the end of the current transaction; with auto-commit on they would end at once, so this requires
     * auto-commit off.
     */
    public static void push(Connection connection, ChangeContext context, String settingsPrefix) {
        try {
            if (connection.getAutoCommit()) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "ChangeContext pushed on a connection in"
                        + " auto-commit mode would end with the push itself; call setAutoCommit(false) first, or use"
                        + " ContextualDataSource, which sends it together with the statement");
            }
            new ContextSql(checkedPrefix(settingsPrefix)).push(connection, Objects.requireNonNull(context, "context"));
        } catch (SQLException e) {
            throw SqlErrors.map(e, new SqlContext(null, "pushing the change context", JdbcTarget.describe(connection)),
                    "Grant the role what pushing needs (set_config is allowed to every role).",
                    ErrorCode.DATABASE_ERROR);
        }
    }

    private static String checkedPrefix(String prefix) {
        // The same rule as TemporalTable.Builder.settingsPrefix, so both sides agree on the setting names.
        return SettingsPrefix.check(prefix, "ContextualDataSource");
    }

    @Override
    public Connection getConnection() throws SQLException {
        return ContextualConnection.wrap(delegate.getConnection(), source, sql);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return ContextualConnection.wrap(delegate.getConnection(username, password), source, sql);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        return type.isInstance(this) ? type.cast(this) : delegate.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return type.isInstance(this) || delegate.isWrapperFor(type);
    }
}
