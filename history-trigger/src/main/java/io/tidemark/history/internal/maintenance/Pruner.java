package io.tidemark.history.internal.maintenance;

import io.tidemark.history.internal.HistoryTransactions;
import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.history.internal.catalog.Registry;
import io.tidemark.history.PruneReport;
import io.tidemark.history.TemporalTable;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;

/**
 * Deletes closed versions that ended before a cutoff. The horizon is committed before anything is deleted, so a
 * concurrent as-of query for an earlier instant fails with HISTORY_PRUNED rather than reading a half-pruned chain.
 * Batches walk the history_id primary key, each in its own short transaction, so pruning a large history neither
 * holds locks for long nor rescans what it already passed.
 */
public final class Pruner {

    private final TemporalTable config;
    private final String object;

    public Pruner(TemporalTable config) {
        this.config = config;
        this.object = HistoryNames.table(config).toString();
    }

    public PruneReport prune(DataSource dataSource, Instant cutoff) {
        Timestamp horizon = HistoryTransactions.inTransaction(dataSource, object, "recording the retention horizon", c -> {
            if (Registry.find(c, HistoryNames.table(config)).isEmpty()) {
                throw TidemarkException.forObject(ErrorCode.SCHEMA_DRIFT, object, HistoryNames.table(config)
                        + " is not registered as a temporal table; install it before pruning");
            }
            // PostgreSQL keeps microseconds; truncating here keeps the horizon exactly the cutoff asked for.
            return Registry.advanceHorizon(c, HistoryNames.table(config),
                    Timestamp.from(cutoff.truncatedTo(java.time.temporal.ChronoUnit.MICROS)));
        });
        String history = HistoryNames.of(config).storedHistory().quoted();
        String delete = SqlTemplate.of("""
                DELETE FROM {{history}} WHERE history_id IN (
                    SELECT history_id FROM {{history}}
                     WHERE history_id > ? AND valid_to < ? ORDER BY history_id LIMIT ?)
                RETURNING history_id""").with("history", history).render();
        long after = 0;
        long deleted = 0;
        int batches = 0;
        while (true) {
            long from = after;
            List<Long> ids = HistoryTransactions.inTransaction(dataSource, object, "pruning history",
                    c -> Jdbc.query(c, delete, rs -> rs.getLong(1), from, horizon, config.pruneBatchSize()));
            batches++;
            deleted += ids.size();
            if (ids.size() < config.pruneBatchSize()) {
                break;
            }
            after = ids.stream().mapToLong(Long::longValue).max().orElseThrow();
        }
        return new PruneReport(horizon.toInstant(), deleted, batches);
    }
}
