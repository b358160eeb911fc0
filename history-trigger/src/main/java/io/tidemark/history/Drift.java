package io.tidemark.history;

import java.util.Objects;

/** One difference between what is installed and what the configuration generates for the table as it is now. */
public final class Drift {

    /**
     * What kind of difference; {@link TemporalTable#evolve} repairs every kind but {@link #COLUMN_TYPE_CHANGED},
     * {@link #HISTORY_TABLE_MISSING} and {@link #CONFLICTING_TRIGGER}, which it refuses with the way out.
     */
    public enum Kind {
        /** The table is not in the registry: it was never installed, or was uninstalled. */
        NOT_INSTALLED,
        /**
         * The history table registered for the table does not exist (with CURRENT_IN_TABLE: the closed-versions table
         * {@code <history>_closed}), and with it the history. evolve refuses: nothing is left to repair.
         */
        HISTORY_TABLE_MISSING,
        /**
         * CURRENT_IN_TABLE: the view {@code <history>} that presents the versions is missing (a {@code DROP COLUMN ...
         * CASCADE} of a versioned column drops it, and an update trigger that compares column by column). The closed
         * versions are intact; evolve recreates the view and the triggers.
         */
        HISTORY_VIEW_MISSING,
        /**
         * CURRENT_IN_TABLE: the view {@code <history>} is not the one the configuration generates (replaced or
         * altered by hand); evolve rebuilds it.
         */
        HISTORY_VIEW_CHANGED,
        /** The table has a column that history does not version yet. */
        COLUMN_ADDED,
        /** A versioned column is gone from the table; history keeps it as an orphan. */
        COLUMN_DROPPED,
        /** A versioned column changed its type; refused by evolve. */
        COLUMN_TYPE_CHANGED,
        /** A column history should have is missing from the history table. */
        HISTORY_COLUMN_MISSING,
        /** A generated index is missing. */
        INDEX_MISSING,
        /** A generated function is missing. */
        FUNCTION_MISSING,
        /** A generated function differs from what the configuration generates (edited by hand, or stale). */
        FUNCTION_CHANGED,
        /** A column default Tidemark generated differs from what the configuration generates. */
        COLUMN_DEFAULT_CHANGED,
        /**
         * CURRENT_IN_TABLE: another BEFORE ROW UPDATE trigger on the table fires after Tidemark's and could change a
         * versioned column unarchived; evolve refuses until it is renamed or made an AFTER trigger.
         */
        CONFLICTING_TRIGGER,
        /** A generated trigger is missing. */
        TRIGGER_MISSING,
        /**
         * A generated trigger exists but fires on other events or at another time, or its {@code WHEN} condition reads
         * other columns than the generated one (CURRENT_IN_TABLE); evolve replaces it.
         */
        TRIGGER_CHANGED,
        /** A generated trigger exists but is disabled, so changes go unrecorded. */
        TRIGGER_DISABLED,
        /** The registered options differ from this configuration (settings prefix, truncate policy, ...). */
        OPTIONS_CHANGED,
        /**
         * CURRENT_IN_TABLE: the table or its closed versions still have a {@code CHECK} an earlier version of Tidemark
         * installed and this one no longer does (on {@code tidemark_context}, and on the closed versions' period and
         * operation): PostgreSQL prepared it for every statement that wrote the table. evolve drops it.
         */
        OBSOLETE_CONSTRAINT
    }

    private final Kind kind;
    private final String detail;

    public Drift(Kind kind, String detail) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.detail = Objects.requireNonNull(detail, "detail");
    }

    public Kind kind() {
        return kind;
    }

    public String detail() {
        return detail;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Drift && ((Drift) o).kind == kind && ((Drift) o).detail.equals(detail);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, detail);
    }

    @Override
    public String toString() {
        return kind + ": " + detail;
    }
}
