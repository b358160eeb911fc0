package io.tidemark.kafka.connect.internal;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The objects a change notification (PostgreSQL LISTEN) said have new changes, and the wait they end: a task's
 * poll waits for its next due object or a notification, whichever comes first.
 */
public final class WakeUps {

    private final Set<String> woken = ConcurrentHashMap.newKeySet();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition signal = lock.newCondition();
    private boolean pending;

    /** Called from the notification thread. */
    public void wake(String objectName) {
        woken.add(objectName);
        wakeAll();
    }

    /** Ends a wait in progress (or the next one) without naming an object. */
    public void wakeAll() {
        lock.lock();
        try {
            pending = true;
            signal.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Whether the object was woken since the last call (and forgets it). */
    public boolean take(String objectName) {
        return woken.remove(objectName);
    }

    /** Waits up to {@code timeout} for a wake-up; returns at once if one came since the last wait. */
    public void await(Duration timeout) throws InterruptedException {
        lock.lock();
        try {
            long nanos = timeout.toNanos();
            while (!pending && nanos > 0) {
                nanos = signal.awaitNanos(nanos);
            }
            pending = false;
        } finally {
            lock.unlock();
        }
    }
}
