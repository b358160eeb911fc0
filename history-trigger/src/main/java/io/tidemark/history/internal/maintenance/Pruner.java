package io.tidemark.history.internal.maintenance;

import io.tidemark.history.internal.HistoryTransactions;
import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.history.internal.catalog.Registry;
import io.tidemark.history.internal.catalog.RegistryEntry;
import io.tidemark.history.HistoryStorage;
import io.tidemark.sync.internal.sql.PgName;
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

    /**
     * CURRENT_IN_TABLE: the current row's operation, chain and start derive from its key's newest closed row, so
     * that row stays whatever its age (only older closed rows of the key go).
     */
    private String keepNewest(String history, List<String> keyColumns) {
        if (config.storage() != HistoryStorage.CURRENT_IN_TABLE) {
            return "";
        }
        StringBuilder match = new StringBuilder();
        for (String key : keyColumns) {
            match.append(SqlTemplate.of(" AND n.{{key}} OPERATOR(pg_catalog.=) h.{{key}}")
                    .with("key", PgName.quote(key)).render());
        }
        return SqlTemplate.of("""

                       AND EXISTS (SELECT 1 FROM {{history}} AS n
                                    WHERE (n.valid_from, n.valid_to) > (h.valid_from, h.valid_to){{match}})""")
                .with("history", history).with("match", match.toString()).render();
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
        List<String> keyColumns = config.storage() != HistoryStorage.CURRENT_IN_TABLE ? List.of()
                : HistoryTransactions.readOnly(dataSource, object, "reading the registered key", c -> Registry.find(c,
                        HistoryNames.table(config)).map(RegistryEntry::keyColumns).orElseThrow());
        String delete = SqlTemplate.of("""
                DELETE FROM {{history}} WHERE history_id IN (
                    SELECT h.history_id FROM {{history}} AS h
                     WHERE h.history_id > ? AND h.valid_to < ?{{keep_newest}} ORDER BY h.history_id LIMIT ?)
                RETURNING history_id""").with("history", history).with("keep_newest", keepNewest(history, keyColumns)).render();
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
