package io.tidemark.history;

/**
 * Where the versions of a temporal table are kept. The choice is a trade-off between the cost every write pays and
 * what the application's table carries; both shapes keep the same guarantees and present the same history (see the
 * README, <em>Storage shapes</em>).
 */
public enum HistoryStorage {
    /**
     * Every version, the current one included, is a row of {@code <table>_history}; the table is left as it is. Every
     * INSERT, UPDATE and DELETE runs the history trigger. The default.
     */
    HISTORY_TABLE,
    /**
     * The current version stays in the table, which gains two columns (its start, {@code tidemark_valid_from}, and
     * its change context, {@code tidemark_context}), both filled by column defaults: an INSERT runs only a small
     * function that resets a start the client supplied (it writes nothing else). UPDATE and DELETE append the
     * superseded version to {@code <table>_history_closed} (one inserted row per change, no history row is ever
     * updated); {@code <table>_history} is a view that presents every version
     * exactly as {@link #HISTORY_TABLE} stores them. The table's two new columns show in {@code SELECT *}, and an
     * {@code INSERT ... SELECT *} or {@code INSERT ... VALUES} listing every column positionally must leave them out.
     */
    CURRENT_IN_TABLE
}
