package io.tidemark.sync;

/** What the very first cycle of a tracked object does, when no watermark has been stored yet. */
public enum InitialSync {
    /**
     * Export everything: the procedure is called with {@code fromVersion: 0, mode: "sync"} and every row it
     * returns is delivered.
     */
    FULL,
    /**
     * Start from now: the current version is recorded and nothing is exported. The version comes from the
     * server when the provider can read one (SQL Server Change Tracking), otherwise from the procedure, called
     * with {@code mode: "seed"}; rows it returns then are discarded with a warning.
     */
    INCREMENTAL
}
