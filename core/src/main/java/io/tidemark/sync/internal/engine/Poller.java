package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.TrackedObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Background polling of one object: a cycle, then the next one after the interval, or at once when a wake-up
 * arrived while it ran or, for an object with a {@code maxRows} hint, when the last call returned changes (a
 * backlog drains in bounded steps without waiting for the interval). One poller never runs two cycles at
 * the same time, and once stopped it schedules nothing more.
 *
 * <p>After a failed or blocked cycle the next attempt waits: the interval, doubled after each further failure, up
 * to {@link #MAX_RETRY_DELAY} (never less than the interval). Change notifications do not cut that wait short:
 * with LISTEN, every commit would otherwise retry a broken destination or procedure at once, reading the whole
 * pending backlog each time. An explicit {@link #wake()} (the application asking) still does.
 *
 * <p>A failure because the database could not be reached ({@code CONNECTION_FAILED}) is different: nothing is
 * wrong with the object, and it should resume as soon as the database is back. Such an object is retried at once,
 * once, when the database is seen answering again ({@link #databaseReachable()}: the engine's probe succeeded, or
 * a notification or the notification connection's reconnect arrived). If that retry fails the same way while the
 * database answers (a store in another database, say), the object keeps its backoff until the database is seen
 * unreachable and back again.
 */
final class Poller {

    private static final Logger LOG = LoggerFactory.getLogger(Poller.class);

    /** The longest wait between attempts of an object whose cycles keep failing, unless its interval is longer. */
    static final Duration MAX_RETRY_DELAY = Duration.ofMinutes(5);

    private final TrackedObject object;
    private final Duration interval;
    private final ScheduledExecutorService scheduler;
    private final Function<TrackedObject, ObjectReport> cycle;
    private final FailureLog log;

    // All guarded by "this".
    private ScheduledFuture<?> next;
    private boolean running;
    private boolean wakeRequested;
    private boolean notifiedWhileRunning;
    private boolean stopped;
    private int consecutiveFailures;
    // The last cycle failed because the database could not be reached.
    private boolean unreachable;
    // ...and it has been retried once since the database was last seen answering.
    private boolean retriedOnReachable;
    // Each scheduled run carries the generation it was scheduled in and runs only if no later one replaced it:
    // cancel(false) also "succeeds" on a run that has begun but not yet taken the lock.
    private long generation;

    Poller(TrackedObject object, Duration interval, ScheduledExecutorService scheduler,
           Function<TrackedObject, ObjectReport> cycle, FailureLog log) {
        this.object = object;
        this.interval = interval;
        this.scheduler = scheduler;
        this.cycle = cycle;
        this.log = log;
    }

    synchronized void start() {
        schedule(0);
    }

    /**
     * Polls as soon as possible: now if idle, right after the current cycle if one is running. A failing object
     * is retried at once too.
     */
    synchronized void wake() {
        if (stopped) {
            return;
        }
        if (running) {
            wakeRequested = true;
            return;
        }
        pollNow();
    }

    /**
     * A change notification: like {@link #wake()}, but a failing object keeps waiting for its next attempt, unless
     * it failed only because the database could not be reached (a notification means it answers again).
     */
    synchronized void changesNotified() {
        if (stopped) {
            return;
        }
        if (running) {
            notifiedWhileRunning = true;
        } else if (consecutiveFailures == 0) {
            pollNow();
        } else if (unreachable) {
            databaseReachable();
        }
    }

    /** Whether the last cycle failed because the database could not be reached: the probe is for this object. */
    synchronized boolean waitingForDatabase() {
        return unreachable && !stopped;
    }

    /**
     * The database answers again: an object whose last cycle failed because it could not be reached retries now,
     * once (see the class comment).
     */
    synchronized void databaseReachable() {
        if (stopped || !unreachable || retriedOnReachable) {
            return;
        }
        retriedOnReachable = true;
        if (running) {
            wakeRequested = true;
        } else {
            pollNow();
        }
    }

    /** The database did not answer: the next time it does, the object is retried again. */
    synchronized void databaseUnreachable() {
        retriedOnReachable = false;
    }

    /** A cycle run outside the poller (runOnce) succeeded: notifications may hurry this object again. */
    synchronized void succeededElsewhere() {
        consecutiveFailures = 0;
        unreachable = false;
        retriedOnReachable = false;
    }

    synchronized void stop() {
        stopped = true;
        if (next != null) {
            next.cancel(false);
        }
    }

    /** Caller holds the lock, and no cycle is running. */
    private void pollNow() {
        if (next != null) {
            if (!next.isDone() && next.getDelay(TimeUnit.NANOSECONDS) <= 0) {
                return; // already due (perhaps already starting): replacing it would only churn
            }
            next.cancel(false);
        }
        schedule(0);
    }

    private void runCycle(long scheduledIn) {
        synchronized (this) {
            if (stopped || scheduledIn != generation) {
                return;
            }
            running = true;
            wakeRequested = false;
            notifiedWhileRunning = false;
        }
        ObjectReport report = null;
        try {
            report = cycle.apply(object);
        } catch (RuntimeException | Error e) {
            // The cycle already reports its own failures; this is a bug or an Error, and polling goes on.
            LOG.error("[{}] unexpected failure in the poller", object.name(), e);
            if (e instanceof Error && !(e instanceof AssertionError)) {
                throw (Error) e;
            }
        } finally {
            synchronized (this) {
                running = false;
                if (!stopped) {
                    schedule(nextDelayNanos(report));
                }
            }
        }
    }

    /** Caller holds the lock. */
    private long nextDelayNanos(ObjectReport report) {
        if (report == null || !report.isSuccess()) {
            consecutiveFailures++;
            unreachable = report != null && report.error().map(e -> e.code() == ErrorCode.CONNECTION_FAILED)
                    .orElse(false);
            if (!unreachable) {
                retriedOnReachable = false;
            }
            long delay = wakeRequested ? 0 : retryDelay(interval, consecutiveFailures).toNanos();
            if (report != null) {
                log.failed(report, Duration.ofNanos(delay));
            }
            return delay;
        }
        consecutiveFailures = 0;
        unreachable = false;
        retriedOnReachable = false;
        log.succeeded(report);
        // With a maxRows hint, keep calling while calls return changes: a procedure may cut below maxRows (at a
        // version boundary), so "came back full" alone would leave a backlog waiting.
        boolean drain = report.outcome() == Outcome.DELIVERED && object.maxRows().isPresent();
        return wakeRequested || notifiedWhileRunning || drain ? 0 : interval.toNanos();
    }

    /** The wait after the given number of consecutive failures: the interval doubled per failure after the first. */
    static Duration retryDelay(Duration interval, int consecutiveFailures) {
        Duration cap = interval.compareTo(MAX_RETRY_DELAY) > 0 ? interval : MAX_RETRY_DELAY;
        Duration delay = interval;
        for (int i = 1; i < consecutiveFailures && delay.compareTo(cap) < 0; i++) {
            delay = delay.multipliedBy(2);
        }
        return delay.compareTo(cap) > 0 ? cap : delay;
    }

    /** Caller holds the lock. */
    private void schedule(long delayNanos) {
        try {
            long scheduledIn = ++generation;
            next = scheduler.schedule(() -> runCycle(scheduledIn), delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // The engine is shutting down between our stopped check and the scheduler's: nothing to do.
            stopped = true;
        }
    }
}
