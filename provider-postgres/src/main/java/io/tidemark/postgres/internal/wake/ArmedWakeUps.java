package io.tidemark.postgres.internal.wake;

import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.jdbc.ConnectionWatchdog;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The reader's half of a generated outbox's armed wake-ups, for the objects of one subscription (the capture's half
 * and why it is safe: section 2b of the outbox script and provider-postgres/README.md, Wake-up).
 *
 * <p>The capture notifies only while the outbox's wake-up flag is set, and the writer that notifies clears it. So
 * after each read of an object whose response names an arm function ({@link ArmHint}) and that returned every change
 * below its horizon (a page cut short by {@code maxRows} is followed by the next one anyway):
 * <ul>
 *   <li>a read that returned changes from a version above every version an earlier read that returned changes
 *       started from arms nothing: changes flow (a position moved past the earlier ones), and the object is read
 *       again after a short wait of its own ({@link #FLOW_SHORTEST} to {@link #FLOW_LONGEST}, see
 *       {@link FlowWait}). Arming now would cost a write and a confirming read, only for the next writer to clear
 *       the flag again and pay for a notification;</li>
 *   <li>a read that returned changes from where an earlier one started (or from below) read them again: they were
 *       not delivered, or not to every destination (one refuses, or lags behind the others). Reading again soon
 *       would read the same changes again, hundreds of times a second for as long as that lasts, so it is treated
 *       like a read that found nothing new: the engine's own wait (its retry delay, its poll interval) or a
 *       notification brings the next read. Its version is no sign of progress: the horizon moves with every
 *       transaction of the database, the engine's own record of the refusal included. (After a reset, reads
 *       from below the earlier ones take this path too until a position passes them: they cost an arming, no
 *       change is missed);</li>
 *   <li>after a read that found nothing new, unless the flag is known to be set, it is set
 *       ({@code <outbox>_arm()}), then the xmax X of a snapshot taken after that commit is read: a writer that read
 *       the flag before it was set has an id below X;</li>
 *   <li>the object is then read again, at once and then at a short, growing interval, until a read's horizon
 *       reaches X: every writer that may not have notified has ended and been read. From then on it waits for a
 *       notification (or its poll interval).</li>
 * </ul>
 * The flag is "known to be set" from the arming until a notification naming the object arrives (every writer that
 * clears it notifies, and every listener receives that), counted from before the arm call, so that one clearing
 * the flag while it is being set is never missed. The listener's (re)connect counts as a notification.
 */
public final class ArmedWakeUps implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ArmedWakeUps.class);
    private static final AtomicInteger THREADS = new AtomicInteger();

    /** The first wait before a confirming read that found the horizon below X; doubled up to {@link #LONGEST}. */
    static final Duration SHORTEST = Duration.ofMillis(1);
    /**
     * The longest wait between confirming reads. The horizon stays below X only while a transaction that was
     * running when the flag was set runs on; a writer among them that did not notify is read within this long of
     * its commit. Reads that return nothing cost little at this rate.
     */
    static final Duration LONGEST = Duration.ofMillis(100);
    /** The first wait between reads while changes flow; see {@link FlowWait}. */
    static final Duration FLOW_SHORTEST = Duration.ofMillis(1);
    /**
     * The longest wait between reads while changes flow: a change that commits right after a read is delivered
     * about this long later (plus the read). It must reach past the gap between commits of a steady flow, or every
     * wait ends in a read that finds nothing and an arming: at 200 commits a second (5 ms apart) a 4 ms wait made
     * the engine's backends spend twice the CPU of a 10 ms one (benchmarks/README-capture-cost.md, "Flow reads").
     * Long enough for that, and short enough that a flowing change is still delivered within about 10 ms of its
     * commit (half of that at the median).
     */
    static final Duration FLOW_LONGEST = Duration.ofMillis(10);
    /** The longest wait before a read that tries again to arm after arming failed (a lasting cause, say). */
    static final Duration LONGEST_AFTER_FAILURE = Duration.ofSeconds(10);

    private static final String SNAPSHOT_XMAX = "SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())"
            + "::text::bigint";

    private final Consumer<String> wakeUp;
    private final int timeoutSeconds;
    private final Map<String, ObjectState> states = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    private static final class ObjectState {
        /** The function the object calls: another object of the same name (another engine's) is not this one. */
        final String procedure;
        /** Notifications naming the object; bumped by the listener thread. */
        final AtomicLong notifications = new AtomicLong();
        // Guarded by "this".
        /** {@link #notifications} when the flag was last set, or -1: the flag is set while the two are equal. */
        long armedAt = -1;
        long confirmAt;
        boolean confirmed;
        int confirmingReads;
        /** Arm calls that failed in a row. */
        int armFailures;
        /**
         * The highest {@code fromVersion} a read that returned changes started from: a read that returns changes
         * from there or below reads changes an earlier read returned (or older ones), which were not delivered.
         */
        long changesReadFrom = Long.MIN_VALUE;
        final FlowWait flow = new FlowWait();
        /**
         * Reads of the object seen by {@link #afterRead}. A timed read is dropped when another read came after the
         * one that scheduled it: that later read decided what comes next (see {@link #later}).
         */
        long reads;

        ObjectState(String procedure) {
            this.procedure = procedure;
        }
    }

    /**
     * @param objects the subscription's objects
     * @param wakeUp  the engine's wake-up: polls the named object at once, or right after the cycle it runs
     * @param timeoutSeconds the provider's statement timeout, which the arm statements keep too
     */
    public ArmedWakeUps(Collection<TrackedObject> objects, Consumer<String> wakeUp, int timeoutSeconds) {
        this(objects, wakeUp, timeoutSeconds, newTimer());
    }

    /** With the timer that runs the timed reads given: tests run them when they choose. */
    ArmedWakeUps(Collection<TrackedObject> objects, Consumer<String> wakeUp, int timeoutSeconds,
                 ScheduledExecutorService timer) {
        this.wakeUp = wakeUp;
        this.timeoutSeconds = timeoutSeconds;
        this.timer = timer;
        objects.forEach(o -> states.put(o.name(), new ObjectState(o.procedure())));
    }

    private static ScheduledExecutorService newTimer() {
        int n = THREADS.incrementAndGet();
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tidemark-wake-confirm-" + n);
            t.setDaemon(true);
            return t;
        });
    }

    /** A notification named the object (or the listener connected): the flag may have been cleared since. */
    public void notified(String objectName) {
        ObjectState state = states.get(objectName);
        if (state != null) {
            state.notifications.incrementAndGet();
        }
        wakeUp.accept(objectName);
    }

    /**
     * After a read of {@code object} from {@code fromVersion} (the request's) whose response said {@code read}
     * ({@link ArmHint#read}, parsed once per read by the caller however many subscriptions it has), on the
     * connection the read used (its transaction ended): sets the flag, or schedules the next read, as the class
     * comment says. Never throws: when arming fails (the database went away between the read and the arm call,
     * say), the flag stays "not known to be set" and the object is read again soon (10 ms, doubling up to 10 s),
     * which tries again; the first failure in a row is logged at WARN.
     */
    public void afterRead(Connection connection, TrackedObject object, long fromVersion,
                          Optional<ArmHint.Read> read) {
        ObjectState state = states.get(object.name());
        if (state == null || !state.procedure.equals(object.procedure())) {
            return; // not an object of this subscription (a provider may serve several engines)
        }
        if (read.isEmpty()) {
            return;
        }
        synchronized (state) {
            state.reads++;
            if (!read.get().reachedHorizon()) {
                return;
            }
            if (read.get().changes()) {
                if (fromVersion > state.changesReadFrom) {
                    state.changesReadFrom = fromVersion;
                    later(state, object.name(), state.flow.found());
                    return;
                }
                // Changes read again: not flowing. The flow's wait is left as it is (this read says nothing of
                // the flow's pace), and the object arms or stays armed as after a read that found nothing new.
            } else {
                state.flow.foundNothing();
            }
            boolean set = state.armedAt >= 0 && state.armedAt == state.notifications.get();
            if (set) {
                confirm(state, object.name(), read.get());
            } else {
                arm(state, connection, object, read.get().armFunction());
            }
        }
    }

    /** Caller holds the state's lock; the flag is set. */
    private void confirm(ObjectState state, String objectName, ArmHint.Read read) {
        if (state.confirmed) {
            return;
        }
        if (read.horizon() >= state.confirmAt) {
            state.confirmed = true; // every writer that may not have notified has ended and been read
        } else {
            later(state, objectName, delay(state.confirmingReads++));
        }
    }

    /** Caller holds the state's lock; a read reached its horizon and the flag is not known to be set. */
    private void arm(ObjectState state, Connection connection, TrackedObject object, String armFunction) {
        long notifications = state.notifications.get();
        try {
            state.confirmAt = arm(connection, PgName.parse(armFunction, "arm function"), timeoutSeconds);
        } catch (SQLException | TidemarkException e) {
            if (state.armFailures == 0) {
                LOG.warn("[{}] Could not arm the wake-up of {} ({}); trying again at the next reads", object.name(),
                        object.procedure(), e.toString());
            } else {
                LOG.debug("[{}] Arming failed again ({} in a row): {}", object.name(), state.armFailures + 1,
                        e.toString());
            }
            later(state, object.name(), failureDelay(state.armFailures++));
            return;
        }
        state.armFailures = 0;
        state.armedAt = notifications;
        state.confirmed = false;
        state.confirmingReads = 0;
        wakeUp.accept(object.name()); // the first confirming read
    }

    /**
     * Sets the flag and ends that transaction, then returns the xmax of a snapshot taken after it: a writer that
     * read the flag unset has an id below it.
     */
    @SuppressWarnings("try") // the watchdog is held for the two statements, never read
    private static long arm(Connection connection, PgName armFunction, int timeoutSeconds) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        // As bounded as the read before it: a connection that went half-open in between must not hold the poll.
        try (Statement s = connection.createStatement();
             ConnectionWatchdog.Guard watch = ConnectionWatchdog.watch(connection, Duration.ofSeconds(timeoutSeconds))) {
            s.setQueryTimeout(timeoutSeconds);
            s.execute(SqlTemplate.of("SELECT {{arm}}()").with("arm", armFunction.quoted()).render());
            if (!autoCommit) {
                connection.commit();
            }
            long xmax;
            try (ResultSet rs = s.executeQuery(SNAPSHOT_XMAX)) {
                rs.next();
                xmax = rs.getLong(1);
            }
            if (!autoCommit) {
                connection.commit();
            }
            return xmax;
        } catch (SQLException e) {
            if (!autoCommit) {
                try {
                    connection.rollback();
                } catch (SQLException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    /**
     * How long to wait before reading again after a read that returned changes: as short as finds changes, so that
     * while they flow each read finds some and no read is wasted, and no longer than {@link #FLOW_LONGEST}. It
     * starts at {@link #FLOW_SHORTEST}, doubles when the read after a wait found nothing (the flow is slower than
     * the wait: the next flow is read later), and halves after {@link #PROBE_AFTER} reads in a row found changes (it
     * may have become faster). Not thread-safe: guarded by the object's state.
     */
    static final class FlowWait {
        static final int PROBE_AFTER = 8;
        private long millis = FLOW_SHORTEST.toMillis();
        private boolean waited;
        private int foundInARow;

        /** A read returned changes: the wait before the next one. */
        Duration found() {
            if (waited && ++foundInARow >= PROBE_AFTER) {
                millis = Math.max(FLOW_SHORTEST.toMillis(), millis / 2);
                foundInARow = 0;
            }
            waited = true;
            return Duration.ofMillis(millis);
        }

        /** A read found nothing new: after a wait, the wait was shorter than the flow's pace. */
        void foundNothing() {
            if (waited) {
                millis = Math.min(FLOW_LONGEST.toMillis(), millis * 2);
            }
            waited = false;
            foundInARow = 0;
        }
    }

    /** 10, 20, 40, ... ms, at most {@link #LONGEST_AFTER_FAILURE}. */
    static Duration failureDelay(int armFailures) {
        long millis = 10L << Math.min(armFailures, 20);
        return Duration.ofMillis(Math.min(millis, LONGEST_AFTER_FAILURE.toMillis()));
    }

    /** 1, 2, 4, ... ms, at most {@link #LONGEST}. */
    static Duration delay(int confirmingReads) {
        long millis = SHORTEST.toMillis() << Math.min(confirmingReads, 16);
        return Duration.ofMillis(Math.min(millis, LONGEST.toMillis()));
    }

    /**
     * Reads the object after {@code delay}, unless another read of it comes first: that read's {@link #afterRead}
     * has scheduled what it needs (a notified read while changes flow, say), and a second read right behind it
     * would find nothing and, with nothing found, arm the flag for no writer. Caller holds the state's lock.
     */
    private void later(ObjectState state, String objectName, Duration delay) {
        long scheduledAfter = state.reads;
        try {
            timer.schedule(() -> {
                synchronized (state) {
                    if (state.reads != scheduledAfter) {
                        return;
                    }
                }
                wakeUp.accept(objectName);
            }, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // Closed: the engine stops, nothing more to read.
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
