package io.tidemark.history.internal.maintenance;

import io.tidemark.history.internal.HistoryTransactions;
import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.history.internal.catalog.Registry;
import io.tidemark.history.internal.catalog.RegistryEntry;
import io.tidemark.history.InvariantViolation;
import io.tidemark.history.TemporalTable;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.sql.Array;
import java.sql.SQLException;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Finds broken invariants in one history table with a single read-only query. Versions of a key are ordered by
 * (valid_from, valid_to, history_id): a tombstone's empty period then sorts before a re-insert at the same instant.
 * With the current version in the table, the history is the view of that name; its open versions have no history_id.
 * At most {@value #LIMIT} violations are returned.
 */
public final class InvariantChecker {

    static final int LIMIT = 1000;

    private final TemporalTable config;

    public InvariantChecker(TemporalTable config) {
        this.config = config;
    }

    public List<InvariantViolation> check(DataSource dataSource) {
        return HistoryTransactions.readOnly(dataSource, HistoryNames.table(config).toString(), "checking history invariants", c -> {
            CatalogReader.pinSearchPath(c);
            List<String> keys = Registry.find(c, HistoryNames.table(config)).map(RegistryEntry::keyColumns).orElse(null);
            if (keys == null) {
                // Not (or no longer) registered: the table's primary key identifies the chains.
                keys = CatalogReader.read(c, config).keyColumns().stream().map(Column::name).toList();
            }
            return Jdbc.query(c, sql(keys), rs -> new InvariantViolation(
                    InvariantViolation.Kind.valueOf(rs.getString(1)), texts(rs.getArray(2)), ids(rs.getArray(3)),
                    rs.getString(4)));
        });
    }

    String sql(List<String> keyColumns) {
        String history = HistoryNames.history(config).quoted();
        String table = HistoryNames.table(config).quoted();
        return SqlTemplate.of("""
                WITH x AS (
                    SELECT h.history_id, {{chain_key}}, h.valid_from, h.valid_to, h.operation,
                           lag(h.valid_to) OVER w AS prev_to, lag(h.operation) OVER w AS prev_op,
                           lag(h.history_id) OVER w AS prev_id, lead(true) OVER w AS has_next
                      FROM {{history}} AS h
                    WINDOW w AS (PARTITION BY {{chain_key}} ORDER BY h.valid_from, h.valid_to, h.history_id)
                )
                SELECT * FROM (
                    SELECT 'NEGATIVE_PERIOD', ARRAY[{{key_text}}], ARRAY[x.history_id],
                           'period [' || x.valid_from || ', ' || x.valid_to || ') ends before it starts'
                      FROM x WHERE x.valid_to < x.valid_from
                    UNION ALL
                    SELECT 'OVERLAP', ARRAY[{{key_text}}], ARRAY[x.prev_id, x.history_id],
                           'version ' || x.history_id || ' starts at ' || x.valid_from || ' before version '
                           || x.prev_id || ' ends at ' || x.prev_to
                      FROM x WHERE x.prev_to > x.valid_from
                    UNION ALL
                    SELECT 'GAP', ARRAY[{{key_text}}], ARRAY[x.prev_id, x.history_id],
                           'version ' || x.prev_id || ' ends at ' || x.prev_to || ' but the next row starts at '
                           || x.valid_from
                      FROM x WHERE x.prev_op <> 3 AND x.prev_to < x.valid_from
                    UNION ALL
                    SELECT 'CHAIN_NOT_TERMINATED', ARRAY[{{key_text}}], ARRAY[x.history_id],
                           'version ' || x.history_id || ' was closed at ' || x.valid_to
                           || ' but neither a next version nor a tombstone follows'
                      FROM x WHERE x.has_next IS NULL AND x.operation <> 3 AND x.valid_to <> 'infinity'
                    UNION ALL
                    SELECT 'MULTIPLE_OPEN', ARRAY[{{key_text}}],
                           pg_catalog.array_agg(x.history_id ORDER BY x.history_id), pg_catalog.count(*) || ' open versions'
                      FROM x WHERE x.valid_to = 'infinity'
                     GROUP BY {{x_keys}} HAVING pg_catalog.count(*) > 1
                    UNION ALL
                    SELECT 'OPEN_VERSION_WITHOUT_ROW', ARRAY[{{key_text}}], ARRAY[x.history_id],
                           'version ' || x.history_id || ' is open but the table has no such row'
                      FROM x WHERE x.valid_to = 'infinity'
                       AND NOT EXISTS (SELECT 1 FROM {{table}} AS t WHERE {{x_matches_t}})
                    UNION ALL
                    SELECT 'ROW_WITHOUT_OPEN_VERSION', ARRAY[{{t_key_text}}], '{}'::bigint[],
                           'the row has no open version in history'
                      FROM {{table}} AS t
                     WHERE NOT EXISTS (SELECT 1 FROM {{history}} AS h WHERE {{h_matches_t}} AND h.valid_to = 'infinity')
                ) AS v(kind, key, ids, detail)
                LIMIT {{limit}}""")
                .with("chain_key", list(keyColumns, "h.", ""))
                .with("history", history)
                .with("table", table)
                .with("key_text", list(keyColumns, "x.", "::text"))
                .with("x_keys", list(keyColumns, "x.", ""))
                .with("x_matches_t", match(keyColumns, "x."))
                .with("t_key_text", list(keyColumns, "t.", "::text"))
                .with("h_matches_t", match(keyColumns, "h."))
                .with("limit", LIMIT)
                .render();
    }

    private static String list(List<String> columns, String prefix, String suffix) {
        return columns.stream().map(k -> prefix + PgName.quote(k) + suffix).collect(Collectors.joining(", "));
    }

    private static String match(List<String> columns, String alias) {
        return columns.stream().map(k -> SqlTemplate.of("{{alias}}{{column}} = t.{{column}}")
                        .with("alias", alias).with("column", PgName.quote(k)).render())
                .collect(Collectors.joining(" AND "));
    }

    private static List<String> texts(Array array) throws SQLException {
        return List.of((String[]) array.getArray());
    }

    private static List<Long> ids(Array array) throws SQLException {
        return List.of((Long[]) array.getArray());
    }
}
