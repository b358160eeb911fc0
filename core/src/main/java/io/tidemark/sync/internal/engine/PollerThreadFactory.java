package io.tidemark.sync.internal.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Names poller threads {@code <engine>-poller-<n>} so they can be found in a thread dump, makes them daemons so
 * that an engine someone forgot to close never keeps the JVM alive, and remembers them so that close can wait
 * until each has really ended (an executor reports "terminated" a moment before its threads are gone).
 */
final class PollerThreadFactory implements ThreadFactory {

    private final String prefix;
    private final AtomicInteger count = new AtomicInteger();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();

    PollerThreadFactory(String engineName) {
        this(engineName, "poller");
    }

    /** Threads named {@code <engine>-<role>-<n>}. */
    PollerThreadFactory(String engineName, String role) {
        this.prefix = engineName + "-" + role + "-";
    }

    @Override
    public Thread newThread(Runnable task) {
        Thread thread = new Thread(task, prefix + count.incrementAndGet());
        thread.setDaemon(true);
        threads.add(thread);
        return thread;
    }

    /** Waits until every thread made so far has ended; true if they all did within the timeout. */
    boolean joinAll(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        for (Thread thread : threads) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return !thread.isAlive();
            }
            TimeUnit.NANOSECONDS.timedJoin(thread, left);
            if (thread.isAlive()) {
                return false;
            }
        }
        return true;
    }
}
