package io.tidemark.testing;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * A small connection pool over a {@link DataSource}, for tests and benchmarks that must not measure connection set-up
 * (tens of milliseconds per connection on a busy machine), as an application with a real pool would not. Closing a
 * borrowed connection rolls back what is open, restores auto-commit and gives it back; an aborted or broken
 * connection is dropped. Session settings a user changed stay, as with most pools. Use a production pool (HikariCP)
 * in applications.
 */
public final class PooledDataSource implements DataSource, AutoCloseable {

    private final DataSource target;
    private final int maxConnections;
    private final long waitNanos;
    private final Deque<Connection> idle = new ArrayDeque<>();
    private int open;
    private boolean closed;

    private PooledDataSource(DataSource target, int maxConnections) {
        this.target = target;
        this.maxConnections = maxConnections;
        this.waitNanos = TimeUnit.SECONDS.toNanos(30);
    }

    /** A pool of at most {@code maxConnections} connections of {@code target}. */
    public static PooledDataSource of(DataSource target, int maxConnections) {
        if (maxConnections < 1) {
            throw new IllegalArgumentException("maxConnections must be at least 1, got " + maxConnections);
        }
        return new PooledDataSource(target, maxConnections);
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection physical = borrow();
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                new Borrowed(physical));
    }

    private Connection borrow() throws SQLException {
        long deadline = System.nanoTime() + waitNanos;
        synchronized (this) {
            while (true) {
                if (closed) {
                    throw new SQLException("the pool is closed");
                }
                Connection c = idle.pollFirst();
                if (c != null) {
                    return c;
                }
                if (open < maxConnections) {
                    open++;
                    break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SQLException("no connection free within 30 s (" + maxConnections + " in use)");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SQLException("interrupted while waiting for a connection", e);
                }
            }
        }
        try {
            return target.getConnection(); // outside the lock: connecting is slow
        } catch (SQLException | RuntimeException e) {
            dropped();
            throw e;
        }
    }

    private void giveBack(Connection c) {
        try {
            if (!c.isClosed() && !c.getAutoCommit()) {
                c.rollback();
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            closeQuietly(c);
        }
        boolean keep;
        try {
            keep = !c.isClosed();
        } catch (SQLException e) {
            keep = false;
        }
        synchronized (this) {
            if (keep && !closed) {
                idle.addFirst(c);
                notifyAll();
                return;
            }
        }
        closeQuietly(c);
        dropped();
    }

    private synchronized void dropped() {
        open--;
        notifyAll();
    }

    /** Closes the idle connections; borrowed ones are closed as they come back. */
    @Override
    public void close() {
        Deque<Connection> toClose;
        synchronized (this) {
            closed = true;
            toClose = new ArrayDeque<>(idle);
            open -= idle.size();
            idle.clear();
            notifyAll();
        }
        toClose.forEach(PooledDataSource::closeQuietly);
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // dropping it anyway
        }
    }

    /** A borrowed connection: everything goes to the physical one, except close, abort and isClosed. */
    private final class Borrowed implements InvocationHandler {
        private final Connection physical;
        private boolean returned;

        Borrowed(Connection physical) {
            this.physical = physical;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            switch (method.getName()) {
                case "close":
                    if (!returned) {
                        returned = true;
                        giveBack(physical);
                    }
                    return null;
                case "isClosed":
                    return returned || physical.isClosed();
                case "abort":
                    if (!returned) {
                        returned = true;
                        physical.abort((java.util.concurrent.Executor) args[0]);
                        closeQuietly(physical);
                        dropped();
                    }
                    return null;
                case "equals":
                    return proxy == args[0];
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "toString":
                    return "pooled " + physical;
                default:
                    if (returned) {
                        throw new SQLException("the connection was given back to the pool");
                    }
                    try {
                        return method.invoke(physical, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
            }
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("a pool hands out connections of one user");
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
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        return target.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || target.isWrapperFor(iface);
    }
}
