package io.tidemark.history;

import java.util.List;

/**
 * What {@link TemporalTable#migrate} did.
 *
 * @param migrated        false when the history was already stored as configured (nothing was done)
 * @param closedVersions  closed versions and tombstones moved from the history table to the closed-versions table
 * @param currentVersions open versions moved into the table's rows (one per row)
 * @param splitVersions   open versions the new shape could not present as they were (their earlier versions pruned,
 *                        or a value in a column no longer versioned), closed at the migration instant and continued
 *                        by an identical current version
 * @param actions         what was done, in order, for a migration log
 */
public record MigrationReport(boolean migrated, long closedVersions, long currentVersions, long splitVersions,
                              List<String> actions) {
    public MigrationReport {
        actions = List.copyOf(actions);
    }
}
