package io.tidemark.postgres;

/**
 * What the outbox records at write time, and so what a destination receives. The choice trades write cost against
 * what a consumer can see; it is recorded at install, and {@code PostgresOutbox.upgrade} refuses to change it while
 * the outbox holds changes (see {@link #KEYS}).
 */
public enum CaptureShape {

    /**
     * Every change is stored as the JSON element the change function returns: the row as it was at that change.
     * A consumer receives every intermediate state of a row (an insert and two updates before a poll are three
     * changes). The writer pays for building and storing the JSON image of every changed row. The default.
     */
    FULL_IMAGE,

    /**
     * Like SQL Server Change Tracking: every change stores only the row's key (typed columns), the operation, the
     * version and, for an update, the names of the changed columns. The change function reads the current row by
     * key when it reads a page and returns one net change per key: the row as it is at read time, not as it was at
     * each change. Intermediate states are not delivered (an insert and two updates before a poll are one insert;
     * a row inserted and deleted before a poll is not delivered at all). Cheaper writes and less WAL; a read joins
     * the page to the table.
     */
    KEYS
}
