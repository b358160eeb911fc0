package io.tidemark.history;

import java.util.List;

/**
 * One broken invariant of a history table, found by {@link TemporalTable#checkInvariants}.
 *
 * @param kind       what is wrong
 * @param key        the primary-key values of the chain, as text, in key-column order
 * @param historyIds the history rows involved
 * @param detail     a sentence for the operator
 */
public record InvariantViolation(Kind kind, List<String> key, List<Long> historyIds, String detail) {

    public InvariantViolation {
        key = List.copyOf(key);
        historyIds = List.copyOf(historyIds);
    }

    /** The invariants. */
    public enum Kind {
        /** Two versions of one key are valid at the same instant. */
        OVERLAP,
        /** A version ends before it starts. */
        NEGATIVE_PERIOD,
        /** A version is followed by the next version (or its tombstone) later than it ended. */
        GAP,
        /** A key has more than one open version. */
        MULTIPLE_OPEN,
        /** A key has an open version but no row in the table (for example after an unrecorded TRUNCATE). */
        OPEN_VERSION_WITHOUT_ROW,
        /** A row of the table has no open version in history. */
        ROW_WITHOUT_OPEN_VERSION,
        /** A version was closed but nothing follows it: neither a next version nor a tombstone. */
        CHAIN_NOT_TERMINATED
    }
}
