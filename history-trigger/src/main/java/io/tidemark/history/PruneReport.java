package io.tidemark.history;

import java.time.Instant;

/**
 * What {@link TemporalTable#prune} did.
 *
 * @param horizon     the retention horizon now recorded: as-of queries before it fail with HISTORY_PRUNED
 * @param deletedRows closed versions deleted
 * @param batches     transactions used
 */
public record PruneReport(Instant horizon, long deletedRows, int batches) {
}
