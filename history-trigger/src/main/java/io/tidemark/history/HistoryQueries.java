package io.tidemark.history;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Read-only, parameterised queries over one history table (from {@link TemporalTable#queries}). Keys are given as
 * the primary-key values in key-column order. Results are immutable.
 *
 * <p>A point-in-time query for an instant before the retention horizon fails with
 * {@link io.tidemark.sync.ErrorCode#HISTORY_PRUNED}: the versions it needs may have been deleted.
 */
public interface HistoryQueries {

    /** Every row of the table as it was at {@code at}: the versions valid then, ordered by key. */
    List<HistoryRow> asOf(Instant at);

    /** The row with {@code key} as it was at {@code at}; empty when it did not exist then. */
    Optional<HistoryRow> asOf(Instant at, Object... key);

    /** Every version of the row with {@code key}, oldest first, without tombstones. */
    List<HistoryRow> versions(Object... key);

    /** The whole history of {@code key}, oldest first: versions and tombstones, with their change context. */
    List<HistoryRow> history(Object... key);

    /** Versions valid at some instant of {@code [from, to)}, by key then start (tombstones have no validity). */
    List<HistoryRow> overlapping(Instant from, Instant to);

    /** Versions whose whole period lies inside {@code [from, to]} (open versions never do unless to is open). */
    List<HistoryRow> containedIn(Instant from, Instant to);

    /** The columns that differ between two history rows of the same table. */
    VersionDiff diff(long fromHistoryId, long toHistoryId);
}
