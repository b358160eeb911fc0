package io.tidemark.postgres.internal.listen;

import io.tidemark.postgres.internal.FunctionNames;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * LISTENs on one dedicated connection and wakes the tracked objects a notification names, on a daemon thread.
 *
 * <p>A notification's payload is the change function that has new changes ({@code public.items_changes}); it wakes
 * every object calling that function. An empty payload wakes every object. Each time LISTEN is in place, on the
 * first connection as after every reconnect (with a growing pause), it wakes every object once, since a notification
 * sent before it reached nobody. {@link #close()} aborts the connection, which unblocks the
 * thread at once, and waits for it to end.
 */
public final class NotificationListener implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NotificationListener.class);
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final Duration FIRST_RETRY = Duration.ofMillis(100);
    /**
     * The longest pause between reconnect attempts. Short, because the reconnect is what wakes every object when
     * the database is back (a commit made before it notified nobody): objects resume within about this long of the
     * server's return. An attempt against a server that is down is refused at once, so it costs little.
     */
    static final Duration LAST_RETRY = Duration.ofMillis(500);
    private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(10);

    private final DataSource dataSource;
    private final String listenSql;
    private final int healthCheckMillis;
    private final List<Target> targets;
    private final Consumer<String> wakeUp;
    private final Thread thread;
    private final Object lock = new Object();
    private Connection connection; // guarded by lock
    private boolean retryNow; // guarded by lock
    private volatile boolean closed;

    private record Target(String objectName, PgName function) {
    }

    private NotificationListener(DataSource dataSource, String channel, Duration healthCheck,
                                 Collection<TrackedObject> objects, Consumer<String> wakeUp) {
        this.dataSource = dataSource;
        this.listenSql = SqlTemplate.of("LISTEN {{channel}}").with("channel", PgName.quote(channel)).render();
        this.healthCheckMillis = Math.toIntExact(Math.max(1, healthCheck.toMillis()));
        this.targets = targets(objects);
        this.wakeUp = wakeUp;
        this.thread = new Thread(this::run, "tidemark-listen-" + channel + "-" + THREADS.incrementAndGet());
        this.thread.setDaemon(true);
    }

    /**
     * Starts listening on {@code channel}.
     *
     * @param healthCheck how long the connection may stay silent before it is checked with a round trip
     */
    public static NotificationListener start(DataSource dataSource, String channel, Duration healthCheck,
                                             Collection<TrackedObject> objects, Consumer<String> wakeUp) {
        NotificationListener listener = new NotificationListener(dataSource, channel, healthCheck, objects, wakeUp);
        listener.thread.start();
        return listener;
    }

    private static List<Target> targets(Collection<TrackedObject> objects) {
        List<Target> targets = new ArrayList<>();
        for (TrackedObject object : objects) {
            try {
                targets.add(new Target(object.name(), PgName.parse(object.procedure(), "function")));
            } catch (TidemarkException e) {
                // The engine refuses such an object at build; nothing to wake.
            }
        }
        return targets;
    }

    private void run() {
        Duration retry = FIRST_RETRY;
        boolean connectedBefore = false;
        int failedAttempts = 0;
        long failingSince = 0;
        while (!closed) {
            synchronized (lock) {
                retryNow = false;
            }
            try {
                Connection c = connect();
                if (c == null) {
                    break; // closed while connecting
                }
                // A commit between an object's last poll and this LISTEN notified nobody. That is true of the first
                // connection too: the engine's first polls run while this thread is still connecting.
                if (failedAttempts > 0) {
                    LOG.info("Listening on the notification channel again after {} ms ({} failed attempts); waking every"
                            + " object in case one was missed", (System.nanoTime() - failingSince) / 1_000_000,
                            failedAttempts);
                } else if (connectedBefore) {
                    LOG.info("Listening on the notification channel again; waking every object in case one was missed");
                } else {
                    LOG.debug("Listening on the notification channel; waking every object once for commits made"
                            + " before it");
                }
                wakeAll();
                connectedBefore = true;
                failedAttempts = 0;
                retry = FIRST_RETRY;
                listen(c);
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    break;
                }
                if (failedAttempts == 0) {
                    failingSince = System.nanoTime();
                    LOG.warn("The notification connection failed ({}); reconnecting every {} ms or less. Until then"
                            + " changes are seen at the poll interval.", e.toString(), LAST_RETRY.toMillis());
                } else {
                    LOG.debug("Reconnecting the notification connection failed ({} attempts): {}", failedAttempts,
                            e.toString());
                }
                failedAttempts++;
                disconnect();
                pause(retry);
                retry = retry.multipliedBy(2).compareTo(LAST_RETRY) > 0 ? LAST_RETRY : retry.multipliedBy(2);
            }
        }
        disconnect();
    }

    private Connection connect() throws SQLException {
        Connection c = dataSource.getConnection();
        try {
            c.setAutoCommit(true);
            // Bounds the health check's round trip: on a connection that died without closing (a partition), it
            // fails after this long instead of waiting on the socket for as long as TCP does. The wait for
            // notifications sets its own timeout and restores this one.
            c.setNetworkTimeout(Runnable::run, healthCheckMillis);
            try (Statement s = c.createStatement()) {
                s.execute(listenSql);
            }
        } catch (SQLException | RuntimeException e) {
            abort(c);
            throw e;
        }
        synchronized (lock) {
            if (closed) {
                abort(c);
                return null;
            }
            connection = c;
        }
        return c;
    }

    private void listen(Connection c) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        while (!closed) {
            PGNotification[] notifications = pg.getNotifications(healthCheckMillis);
            if (closed) {
                return;
            }
            if (notifications == null || notifications.length == 0) {
                // Silence: make sure the connection is still alive (a dead peer does not always close the socket).
                try (Statement s = c.createStatement()) {
                    s.execute(listenSql);
                }
            } else {
                dispatch(notifications);
            }
        }
    }

    private void dispatch(PGNotification[] notifications) {
        Set<String> woken = new LinkedHashSet<>();
        for (PGNotification n : notifications) {
            String payload = n.getParameter();
            if (payload == null || payload.isBlank()) {
                targets.forEach(t -> woken.add(t.objectName()));
                continue;
            }
            PgName function;
            try {
                function = PgName.parse(payload, "function");
            } catch (TidemarkException e) {
                LOG.debug("Ignoring a notification whose payload is not a function name: {}", payload);
                continue;
            }
            for (Target t : targets) {
                if (FunctionNames.matches(t.function(), function)) {
                    woken.add(t.objectName());
                }
            }
        }
        woken.forEach(this::wake);
    }

    private void wakeAll() {
        targets.stream().map(Target::objectName).distinct().forEach(this::wake);
    }

    private void wake(String objectName) {
        try {
            wakeUp.accept(objectName);
        } catch (RuntimeException e) {
            LOG.warn("Waking {} failed: {}", objectName, e.toString());
        }
    }

    private void pause(Duration duration) {
        long deadline = System.nanoTime() + duration.toNanos();
        synchronized (lock) {
            long left;
            while (!closed && !retryNow && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /**
     * The database answers again (the engine's probe got through): a reconnect waiting out its pause tries at once,
     * so that commits made from now on notify. Does nothing while connected.
     */
    public void retryNow() {
        synchronized (lock) {
            retryNow = true;
            lock.notifyAll();
        }
    }

    private void disconnect() {
        Connection c;
        synchronized (lock) {
            c = connection;
            connection = null;
        }
        if (c != null) {
            abort(c);
        }
    }

    /**
     * Ends the connection without waiting for it: {@code abort} closes the socket under a thread blocked in
     * {@code getNotifications}. The connection is never handed back to a pool while it LISTENs.
     */
    private static void abort(Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            LOG.debug("Aborting the notification connection failed: {}", e.toString());
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("Closing the aborted notification connection failed: {}", e.toString());
        }
    }

    /** Stops listening; the thread has ended when this returns (or is reported if it did not). */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            lock.notifyAll();
        }
        disconnect();
        try {
            thread.join(JOIN_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.error("The notification thread {} did not stop within {}", thread.getName(), JOIN_TIMEOUT);
        }
    }
}
