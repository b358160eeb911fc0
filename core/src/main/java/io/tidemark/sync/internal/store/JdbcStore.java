package io.tidemark.sync.internal.store;

/**
 * A store kept in a database through {@link JdbcStoreSupport}: the engine finds the lease tables of coordination
 * next to it, and its writes can be fenced.
 */
public interface JdbcStore {

    /** The store's connection, dialect and table names. */
    JdbcStoreSupport support();
}
