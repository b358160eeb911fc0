package io.tidemark.history;

/**
 * Told how far {@link TemporalTable#install(javax.sql.DataSource, InstallProgress)} has come while it seeds the
 * history of a table's existing rows, which on a large table is most of the install's time. Called on the
 * installing thread, inside the install's transaction: keep it quick (print, log, update a gauge).
 */
@FunctionalInterface
public interface InstallProgress {

    /**
     * Called once before the first batch ({@code rowsDone} 0) and after every batch; the last call has
     * {@code rowsDone == rowsTotal}. Not called when the table was installed already.
     *
     * @param rowsDone  existing rows that have their open version so far
     * @param rowsTotal rows the table had when the install locked it (writers are kept out until it commits)
     */
    void seeded(long rowsDone, long rowsTotal);
}
