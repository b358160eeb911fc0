package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.sync.SyncEngine;
import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDependsOnDatabaseInitializationDetector;

import java.util.Set;

/**
 * Makes every {@link SyncEngine} bean wait for the application's database initialization (Flyway, Liquibase,
 * {@code spring.sql.init}): the migrations that install the outbox and the change functions run before the engine
 * is created, checked and started. Registered in META-INF/spring.factories. The auto-configuration's
 * {@link AssembledEngine} too: it builds the engine (and installs a log-based capture) and is created before the
 * engine bean that depends on it.
 */
public final class SyncEngineDependsOnDatabaseInitializationDetector
        extends AbstractBeansOfTypeDependsOnDatabaseInitializationDetector {

    @Override
    protected Set<Class<?>> getDependsOnDatabaseInitializationBeanTypes() {
        return Set.of(SyncEngine.class, AssembledEngine.class);
    }
}
