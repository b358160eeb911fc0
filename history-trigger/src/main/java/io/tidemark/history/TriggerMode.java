package io.tidemark.history;

/**
 * How the history trigger is attached. Both write exactly the same rows for the same changes, with one documented
 * exception: a single UPDATE statement that moves rows onto keys other rows of the same statement leave.
 */
public enum TriggerMode {
    /**
     * One {@code FOR EACH ROW} trigger: the reference's shape, the cheapest for statements that change one row.
     * The default.
     */
    ROW,
    /**
     * Three {@code FOR EACH STATEMENT} triggers with transition tables that write history set-based: one function
     * call per statement instead of per row, much cheaper for statements that change many rows (see the benchmark
     * figures in the README). Within one UPDATE statement, old and new rows are paired by primary key, so a
     * statement that shifts keys (1 to 2 and 2 to 3) records key 2 as updated rather than deleted and re-inserted.
     *
     * <p>With {@link HistoryStorage#CURRENT_IN_TABLE} only DELETE is archived per statement, by one
     * {@code FOR EACH STATEMENT} trigger reading the deleted rows; an INSERT still runs its small row trigger and an
     * UPDATE its row trigger, because each must stamp the new version's start into the row it writes, which only a
     * {@code BEFORE} row trigger can. The history written is the same as in {@link #ROW}.
     */
    STATEMENT
}
