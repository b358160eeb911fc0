package io.tidemark.postgres;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * A data source that records what its connections send: each statement executed (its SQL, comments and line breaks
 * folded), each transaction begun ({@code BEGIN}, when auto-commit is turned off) and each {@code COMMIT} and
 * {@code ROLLBACK}. For tests that pin how many statements and transactions an operation costs the database.
 */
final class StatementLog implements DataSource {

    private final DataSource target;
    private final List<String> entries = new ArrayList<>();
    private boolean recording;

    StatementLog(DataSource target) {
        this.target = target;
    }

    /** Clears the log and records from now on. */
    synchronized void start() {
        entries.clear();
        recording = true;
    }

    /** Stops recording and returns what was recorded since {@link #start()}. */
    synchronized List<String> stop() {
        recording = false;
        return List.copyOf(entries);
    }

    /** What was recorded since {@link #start()} so far, recording on. */
    synchronized List<String> recorded() {
        return List.copyOf(entries);
    }

    private synchronized void record(String entry) {
        if (recording) {
            entries.add(entry);
        }
    }

    /** The statement's SQL on one line, without its comments: what a test matches on. */
    static String fold(String sql) {
        return sql.replaceAll("--[^\n]*", " ").replaceAll("\\s+", " ").trim();
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection connection = target.getConnection();
        return (Connection) recorded(connection, Connection.class, null);
    }

    /** {@code target} with its statements' executions and its transaction boundaries recorded. */
    private Object recorded(Object target, Class<?> type, String sql) {
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            String name = method.getName();
            if (name.startsWith("execute")) {
                record(fold(sql != null ? sql : (String) args[0]));
            } else if (name.equals("commit") || name.equals("rollback") && (args == null || args.length == 0)) {
                record(name.toUpperCase(java.util.Locale.ROOT));
            } else if (name.equals("setAutoCommit") && !(Boolean) args[0]
                    && ((Connection) target).getAutoCommit()) {
                record("BEGIN");
            }
            Object result;
            try {
                result = method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (name.equals("prepareStatement") && result instanceof PreparedStatement) {
                return recorded(result, PreparedStatement.class, (String) args[0]);
            }
            if (name.equals("createStatement") && result instanceof Statement) {
                return recorded(result, Statement.class, null);
            }
            return result;
        });
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("one user");
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return target.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        target.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        target.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return target.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return target.getParentLogger();
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
