package io.tidemark.spring.boot.autoconfigure;

import io.tidemark.sync.SyncEngine;
import org.springframework.context.SmartLifecycle;

import java.util.Objects;

/**
 * Starts the auto-configured engine's background polling with the application context and stops it in the context's
 * shutdown: {@link #stop()} closes the engine, which lets running cycles finish within
 * {@code tidemark.shutdown-timeout}, then cancels them; every poller thread has ended when it returns. An engine
 * is started once: a context stopped and started again does not restart it (create a new context).
 *
 * <p>Its phase is {@link SmartLifecycle#DEFAULT_PHASE}: it starts after the web server and stops before it, and
 * before the DataSource is closed.
 */
public final class TidemarkEngineLifecycle implements SmartLifecycle {

    private final SyncEngine engine;
    private final boolean autoStartup;
    private volatile boolean running;

    public TidemarkEngineLifecycle(SyncEngine engine, boolean autoStartup) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.autoStartup = autoStartup;
    }

    @Override
    public synchronized void start() {
        if (!running) {
            engine.start();
            running = true;
        }
    }

    /** Closes the engine (synchronously: the shutdown phase waits for the pollers to end). */
    @Override
    public synchronized void stop() {
        engine.close();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public boolean isAutoStartup() {
        return autoStartup;
    }
}
