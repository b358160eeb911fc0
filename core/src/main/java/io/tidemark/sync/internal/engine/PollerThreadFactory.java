package io.tidemark.sync.internal.engine;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Names poller threads {@code <engine>-poller-<n>} so they can be found in a thread dump, and makes them
 * daemons, so that an engine someone forgot to close never keeps the JVM alive.
 */
final class PollerThreadFactory implements ThreadFactory {

    private final String prefix;
    private final AtomicInteger count = new AtomicInteger();

    PollerThreadFactory(String engineName) {
        this.prefix = engineName + "-poller-";
    }

    @Override
    public Thread newThread(Runnable task) {
        Thread thread = new Thread(task, prefix + count.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    }
}
