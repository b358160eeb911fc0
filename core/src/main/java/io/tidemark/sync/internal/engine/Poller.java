package io.tidemark.sync.internal.engine;

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
 */
final class Poller {

    private static final Logger LOG = LoggerFactory.getLogger(Poller.class);

    private final TrackedObject object;
    private final Duration interval;
    private final ScheduledExecutorService scheduler;
    private final Function<TrackedObject, ObjectReport> cycle;

    // All guarded by "this".
    private ScheduledFuture<?> next;
    private boolean running;
    private boolean wakeRequested;
    private boolean stopped;

    Poller(TrackedObject object, Duration interval, ScheduledExecutorService scheduler,
           Function<TrackedObject, ObjectReport> cycle) {
        this.object = object;
        this.interval = interval;
        this.scheduler = scheduler;
        this.cycle = cycle;
    }

    synchronized void start() {
        schedule(0);
    }

    /** Polls as soon as possible: now if idle, right after the current cycle if one is running. */
    synchronized void wake() {
        if (stopped) {
            return;
        }
        if (running) {
            wakeRequested = true;
            return;
        }
        if (next != null && next.cancel(false)) {
            schedule(0);
        }
    }

    synchronized void stop() {
        stopped = true;
        if (next != null) {
            next.cancel(false);
        }
    }

    private void runCycle() {
        synchronized (this) {
            if (stopped) {
                return;
            }
            running = true;
            wakeRequested = false;
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
                    // With a maxRows hint, keep calling while calls return changes: a procedure may cut below
                    // maxRows (at a version boundary), so "came back full" alone would leave a backlog waiting.
                    boolean drain = report != null && report.outcome() == Outcome.DELIVERED
                            && object.maxRows().isPresent();
                    schedule(wakeRequested || drain ? 0 : interval.toNanos());
                }
            }
        }
    }

    /** Caller holds the lock. */
    private void schedule(long delayNanos) {
        try {
            next = scheduler.schedule(this::runCycle, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // The engine is shutting down between our stopped check and the scheduler's: nothing to do.
            stopped = true;
        }
    }
}
