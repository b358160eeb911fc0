package io.tidemark.spring.boot.autoconfigure.spi;

import io.tidemark.sync.SyncEngine;

/**
 * A bean that adjusts the auto-configured engine's builder after the {@code tidemark.*} properties were applied and
 * before it is built: for what properties do not cover (a {@code Clock}, a destination built in code with a
 * policy). Customizers run in their {@code @Order}; the engine's own checks still run once, at {@code build()}.
 */
@FunctionalInterface
public interface SyncEngineCustomizer {

    void customize(SyncEngine.Builder builder);
}
