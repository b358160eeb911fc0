package io.tidemark.history;

/** What the history does when the table is truncated. TRUNCATE fires no row trigger, so it needs a rule of its own. */
public enum TruncatePolicy {
    /**
     * Close every open version at the truncating transaction's instant and write a tombstone for each, exactly as
     * if every row had been deleted. The default: history never keeps a version open for a row that is gone.
     */
    CLOSE_VERSIONS,
    /** Refuse TRUNCATE with an error; the application must DELETE (which history records row by row). */
    REFUSE
}
