package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.history.ChangeContext;
import io.tidemark.history.ContextualDataSource;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * A DataSource bean's connections with the request's change context, when they are PostgreSQL connections. The
 * context travels as PostgreSQL settings ({@code pg_catalog.set_config}), so a SQL Server (or any other) DataSource of
 * the same application must get its connections untouched: an application may hold both, and the starter wraps every
 * DataSource bean. The database is read once, from the first connection's metadata (the driver answers it without a
 * round trip), and remembered.
 */
public final class PostgresContextDataSource implements DataSource {

    private static final String POSTGRESQL = "PostgreSQL";

    private final DataSource delegate;
    private final Supplier<ChangeContext> source;
    private final String settingsPrefix;
    /** Null until the first connection tells which database this is. */
    private volatile Boolean postgres;

    public PostgresContextDataSource(DataSource delegate, Supplier<ChangeContext> source, String settingsPrefix) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.source = Objects.requireNonNull(source, "source");
        this.settingsPrefix = Objects.requireNonNull(settingsPrefix, "settingsPrefix");
        // Fails here, at start-up, on a prefix the settings could not carry, rather than at the first request.
        ContextualDataSource.wrap(delegate, source, settingsPrefix);
    }

    @Override
    public Connection getConnection() throws SQLException {
        return withContext(delegate.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return withContext(delegate.getConnection(username, password));
    }

    private Connection withContext(Connection connection) throws SQLException {
        Boolean known = postgres;
        if (known == null) {
            try {
                known = POSTGRESQL.equals(connection.getMetaData().getDatabaseProductName());
            } catch (SQLException | RuntimeException e) {
                connection.close();
                throw e;
            }
            postgres = known;
        }
        return known ? ContextualDataSource.wrap(connection, source, settingsPrefix) : connection;
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
