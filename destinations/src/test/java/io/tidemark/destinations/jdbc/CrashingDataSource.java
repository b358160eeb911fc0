package io.tidemark.destinations.jdbc;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

/**
 * A data source that, once armed, kills the server process of a connection at the moment its owner
 * calls {@code commit()}: everything the transaction did has reached the server, and the commit never does. The
 * kill comes from another session ({@code pg_terminate_backend}, SQL Server's {@code KILL}), as when the database
 * or the network dies.
 */
final class CrashingDataSource implements DataSource {

    private final DataSource target;
    private final String sessionQuery;
    private final String killStatement;
    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile int crashes;

    private CrashingDataSource(DataSource target, String sessionQuery, String killStatement) {
        this.target = target;
        this.sessionQuery = sessionQuery;
        this.killStatement = killStatement;
    }

    static CrashingDataSource postgres(DataSource target) {
        return new CrashingDataSource(target, "SELECT pg_backend_pid()", "SELECT pg_terminate_backend(%d, 5000)");
    }

    static CrashingDataSource sqlServer(DataSource target) {
        return new CrashingDataSource(target, "SELECT @@SPID", "KILL %d");
    }

    /** The next commit on a connection of this data source dies before it reaches the server. */
    void crashNextCommit() {
        armed.set(true);
    }

    int crashes() {
        return crashes;
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection real = target.getConnection();
        int pid;
        try (Statement s = real.createStatement(); ResultSet rs = s.executeQuery(sessionQuery)) {
            rs.next();
            pid = rs.getInt(1);
        }
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("commit") && armed.compareAndSet(true, false)) {
                        kill(pid);
                        crashes++;
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private void kill(int pid) throws SQLException {
        try (Connection admin = target.getConnection(); Statement s = admin.createStatement()) {
            s.execute(String.format(killStatement, pid));
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException();
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
