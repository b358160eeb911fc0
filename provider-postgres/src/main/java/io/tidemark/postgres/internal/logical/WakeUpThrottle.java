package io.tidemark.postgres.internal.logical;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Wakes an object at most once per interval: the first commit after a quiet spell wakes it at once, and commits
 * that follow within the interval are read together by one wake-up at its end. Each read the engine makes ends in
 * a watermark write, so under a steady flow this bounds the writes (and the database work they cost) by the
 * interval rather than by the commit rate, for a delay of at most one interval.
 */
final class WakeUpThrottle implements AutoCloseable {

    /** When an object was last woken, and whether a wake-up is already scheduled for it. */
    private static final class State {
        long lastWake = Long.MIN_VALUE / 2;
        boolean scheduled;
    }

    private final long intervalNanos;
    private final Consumer<String> wakeUp;
    private final Map<String, State> states = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    WakeUpThrottle(Duration interval, Consumer<String> wakeUp) {
        this.intervalNanos = interval.toNanos();
        this.wakeUp = wakeUp;
        this.timer = intervalNanos == 0 ? null : Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tidemark-logical-wake-ups");
            t.setDaemon(true);
            return t;
        });
    }

    void wake(String objectName) {
        if (timer == null) {
            wakeUp.accept(objectName);
            return;
        }
        State state = states.computeIfAbsent(objectName, n -> new State());
        long delay;
        synchronized (state) {
            if (state.scheduled) {
                return; // the scheduled wake-up reads this commit too
            }
            long now = System.nanoTime();
            delay = state.lastWake + intervalNanos - now;
            if (delay <= 0) {
                state.lastWake = now;
            } else {
                state.scheduled = true;
            }
        }
        if (delay <= 0) {
            wakeUp.accept(objectName);
        } else {
            timer.schedule(() -> fire(objectName, state), delay, TimeUnit.NANOSECONDS);
        }
    }

    private void fire(String objectName, State state) {
        synchronized (state) {
            state.scheduled = false;
            state.lastWake = System.nanoTime();
        }
        wakeUp.accept(objectName);
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
