package io.tidemark.history;

import javax.sql.DataSource;
import java.sql.Connection;

/** A data source whose connections default to another isolation level, as a pool configured so gives them. */
record IsolationDataSource(DataSource delegate, int isolation) implements DataSource {
    @Override
    public Connection getConnection() throws java.sql.SQLException {
        Connection c = delegate.getConnection();
        c.setTransactionIsolation(isolation);
        return c;
    }

    @Override
    public Connection getConnection(String user, String password) throws java.sql.SQLException {
        return getConnection();
    }

    @Override
    public java.io.PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(java.io.PrintWriter out) {
    }

    @Override
    public void setLoginTimeout(int seconds) {
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public java.util.logging.Logger getParentLogger() {
        return java.util.logging.Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws java.sql.SQLException {
        throw new java.sql.SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
        return false;
    }
}
