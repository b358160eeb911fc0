package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.ChangeProvider;

import java.util.Objects;

/**
 * The engine and the provider it was built with. The engine never closes its provider (one may be shared), so the
 * auto-configuration, which made this one for this engine alone, closes it here: the log-based provider holds a
 * replication connection and a thread, and its slot stays active (no one can drop it) until it is closed.
 */
public final class AssembledEngine implements AutoCloseable {

    private final SyncEngine engine;
    private final ChangeProvider provider;

    AssembledEngine(SyncEngine engine, ChangeProvider provider) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.provider = Objects.requireNonNull(provider, "provider");
    }

    public SyncEngine engine() {
        return engine;
    }

    /** The engine first (idempotent): its running cycles may still read the provider until they end. */
    @Override
    public void close() {
        try {
            engine.close();
        } finally {
            provider.close();
        }
    }
}
