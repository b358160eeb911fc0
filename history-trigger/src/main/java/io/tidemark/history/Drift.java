package io.tidemark.history;

import java.util.Objects;

/** One difference between what is installed and what the configuration generates for the table as it is now. */
public final class Drift {

    /** What kind of difference; {@link TemporalTable#evolve} repairs every kind but {@link #COLUMN_TYPE_CHANGED}. */
    public enum Kind {
        /** The table is not in the registry: it was never installed, or was uninstalled. */
        NOT_INSTALLED,
        /** The history table registered for the table does not exist. */
        HISTORY_TABLE_MISSING,
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
        /** A generated trigger exists but is disabled, so changes go unrecorded. */
        TRIGGER_DISABLED,
        /** The registered options differ from this configuration (settings prefix, truncate policy, ...). */
        OPTIONS_CHANGED
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
