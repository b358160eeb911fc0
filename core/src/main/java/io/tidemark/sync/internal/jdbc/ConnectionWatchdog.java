package io.tidemark.sync.internal.jdbc;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Abandons a connection that stopped answering. A statement timeout ({@code setQueryTimeout}) asks the server to
 * cancel, over the network; when the network itself is what failed (a partition, a failover behind a load balancer,
 * a half-open socket), that request gets through no better than the query, and the caller would wait on the socket
 * for as long as TCP does (minutes to hours, or for ever without keepalive). The watchdog aborts the connection
 * ({@link Connection#abort}) once the statement timeout plus a grace period has passed, which closes its socket and
 * fails the waiting call at once.
 */
public final class ConnectionWatchdog {

    /** How long after the statement timeout a connection is abandoned: enough for a cancel that gets through. */
    public static final Duration GRACE = Duration.ofSeconds(2);

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionWatchdog.class);
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final ScheduledThreadPoolExecutor TIMER = timer();

    private ConnectionWatchdog() {
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "tidemark-connection-watchdog-" + THREADS.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /**
     * Watches {@code connection} until the guard is closed: if that takes longer than {@code statementTimeout} plus
     * {@link #GRACE}, the connection is aborted.
     */
    public static Guard watch(Connection connection, Duration statementTimeout) {
        Guard guard = new Guard(connection);
        guard.future = TIMER.schedule(guard::fire, statementTimeout.plus(GRACE).toNanos(), TimeUnit.NANOSECONDS);
        return guard;
    }

    /** One watched stretch of work; closing it ends the watch. */
    public static final class Guard implements AutoCloseable {
        private final Connection connection;
        private final AtomicBoolean fired = new AtomicBoolean();
        private volatile ScheduledFuture<?> future;

        private Guard(Connection connection) {
            this.connection = connection;
        }

        /** Whether the connection was abandoned because it did not answer in time. */
        public boolean fired() {
            return fired.get();
        }

        private void fire() {
            fired.set(true);
            try {
                connection.abort(Runnable::run);
            } catch (Exception | LinkageError e) {
                LOG.debug("Aborting a connection that stopped answering failed: {}", e.toString());
            }
        }

        @Override
        public void close() {
            ScheduledFuture<?> f = future;
            if (f != null) {
                f.cancel(false);
            }
        }
    }
}
