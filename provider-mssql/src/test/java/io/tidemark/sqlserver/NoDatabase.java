package io.tidemark.sqlserver;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * A data source for tests that must not reach a database: every connection attempt is counted and fails with
 * the SQLState of an unreachable server, so a test can prove that something was refused before any SQL ran, or
 * see how a connection failure is reported.
 */
public final class NoDatabase implements DataSource {

    private final AtomicInteger attempts = new AtomicInteger();

    public int attempts() {
        return attempts.get();
    }

    @Override
    public Connection getConnection() throws SQLException {
        attempts.incrementAndGet();
        throw new SQLException("no database in this test", "08001");
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
    }

    @Override
    public void setLoginTimeout(int seconds) {
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }
}
