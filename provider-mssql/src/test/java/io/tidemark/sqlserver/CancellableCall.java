package io.tidemark.sqlserver;

import io.tidemark.sync.spi.CallContext;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/** A {@link CallContext} a test cancels itself, as the engine does at close. */
final class CancellableCall implements CallContext {

    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final Set<Runnable> actions = ConcurrentHashMap.newKeySet();

    @Override
    public Registration onCancel(Runnable cancelAction) {
        actions.add(cancelAction);
        if (cancelled.get()) {
            cancelAction.run();
        }
        return () -> actions.remove(cancelAction);
    }

    @Override
    public boolean isCancelled() {
        return cancelled.get();
    }

    void cancel() {
        if (cancelled.compareAndSet(false, true)) {
            actions.forEach(Runnable::run);
        }
    }
}
