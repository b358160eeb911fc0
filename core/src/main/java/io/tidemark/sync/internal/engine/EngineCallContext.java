package io.tidemark.sync.internal.engine;

import io.tidemark.sync.spi.CallContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The engine's cancellation switch: thrown once, at close, for every call in flight. The Kafka Connect source task
 * uses the same switch when Connect stops it.
 */
public final class EngineCallContext implements CallContext {

    private static final Logger LOG = LoggerFactory.getLogger(EngineCallContext.class);

    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final Set<Runnable> actions = ConcurrentHashMap.newKeySet();

    @Override
    public Registration onCancel(Runnable cancelAction) {
        actions.add(cancelAction);
        if (cancelled.get()) {
            runQuietly(cancelAction);
        }
        return () -> actions.remove(cancelAction);
    }

    @Override
    public boolean isCancelled() {
        return cancelled.get();
    }

    public void cancel() {
        if (cancelled.compareAndSet(false, true)) {
            actions.forEach(EngineCallContext::runQuietly);
        }
    }

    private static void runQuietly(Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            LOG.warn("Cancelling a call in flight failed: {}", e.toString());
        }
    }
}
