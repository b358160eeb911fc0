package io.tidemark.history;

import java.util.List;

/**
 * What {@link TemporalTable#migrate} did.
 *
 * @param migrated        false when the history was already stored as configured (nothing was done)
 * @param closedVersions  closed versions and tombstones copied, with their history_id, to where the configured
 *                        storage keeps them
 * @param currentVersions current versions moved (one per row of the table): into the rows, or out of them as open
 *                        versions of the history table
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
