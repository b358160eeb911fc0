package io.tidemark.history.internal.ddl;

import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The statements that move a history stored as CURRENT_IN_TABLE (closed versions in {@code <history>_closed}, the
 * current versions in the table's rows) back into one history table (storage HISTORY_TABLE). Pure:
 * {@link StorageMigration} orders and runs them.
 */
final class HistoryTableMigrationSql {

    private final HistorySql sql;
    private final String closed;
    private final String table;
    private final String insertColumns;
    private final String fromClosed;
    private final String fromTable;

    /**
     * @param sql      the target's SQL (storage HISTORY_TABLE, the table's shape without the two current-version columns)
     * @param held     the closed-versions table's columns
     * @param orphans  its columns that are not versioned now, kept as orphan columns of the history table
     * @param optIns   the opt-in columns the target creates ({@code db_session_user}, {@code transaction_id}); filled
     *                 from the closed versions where they hold them (a history migrated from this shape before), else
     *                 NULL, never by their defaults (those would name the migrating session)
     */
    HistoryTableMigrationSql(HistorySql sql, Set<String> held, List<Column> orphans, List<String> optIns) {
        this.sql = sql;
        this.closed = sql.names.closedTable().quoted();
        this.table = sql.table;
        List<String> columns = new ArrayList<>();
        List<String> closedValues = new ArrayList<>();
        List<String> tableValues = new ArrayList<>();
        for (Column c : sql.shape.versioned()) {
            columns.add(c.quoted());
            closedValues.add(held.contains(c.name()) ? "c." + c.quoted() : "NULL");
            tableValues.add("t." + c.quoted());
        }
        for (Column c : orphans) {
            columns.add(c.quoted());
            closedValues.add("c." + c.quoted());
            tableValues.add("NULL");
        }
        for (String optIn : optIns) {
            columns.add(PgName.quote(optIn));
            closedValues.add(held.contains(optIn) ? "c." + PgName.quote(optIn) : "NULL");
            tableValues.add("NULL");
        }
        this.insertColumns = String.join(", ", columns);
        this.fromClosed = String.join(", ", closedValues);
        this.fromTable = String.join(", ", tableValues);
    }

    /**
     * The view, then the table, in ACCESS EXCLUSIVE mode: the order readers of the view take them in (a reader locks
     * the view before what it reads), and writers never lock the view. {@code LOCK TABLE} on the view would also lock
     * what it reads, the closed versions before the table, against the writers' order (table, then closed versions);
     * so the view alone is locked by a no-op change of one of its columns. Its name is looked up again after the
     * wait, so a migration that waited for another one finds the history table it made.
     */
    static SqlStep lock(PgName table, PgName history) {
        return new SqlStep("The view alone, then the table, until commit: readers and writers wait; a writer in flight\n"
                + "finishes first (its change is migrated), later ones are archived by the new triggers.",
                SqlTemplate.of("""
                        ALTER TABLE {{history}} ALTER COLUMN chain_no DROP DEFAULT;
                        LOCK TABLE {{table}} IN ACCESS EXCLUSIVE MODE""")
                        .with("history", history.quoted()).with("table", table.quoted()).render());
    }

    /** Then the closed versions (after the table: the writers' order). */
    SqlStep lockClosedVersions() {
        return new SqlStep("The closed versions, after the table as writers take them.",
                SqlTemplate.of("LOCK TABLE {{closed}} IN ACCESS EXCLUSIVE MODE").with("closed", closed).render());
    }

    /** Every trigger and function of the current-in-table shape, and the view (its name becomes the table's). */
    List<SqlStep> dropCurrentInTableShape() {
        return List.of(
                new SqlStep("The current-in-table shape's triggers.", MigrationSql.dropGeneratedTriggers(sql)),
                new SqlStep("Its functions (the history table shape creates its own).", SqlTemplate.of("""
                        DROP FUNCTION IF EXISTS {{write_function}}();
                        DROP FUNCTION IF EXISTS {{insert_function}}();
                        DROP FUNCTION IF EXISTS {{truncate_function}}();
                        DROP FUNCTION IF EXISTS {{as_of_function}}(pg_catalog.timestamptz)""")
                        .with("write_function", sql.names.writeFunction().quoted())
                        .with("insert_function", sql.names.insertFunction().quoted())
                        .with("truncate_function", sql.names.truncateFunction().quoted())
                        .with("as_of_function", sql.names.asOfFunction().quoted()).render()),
                new SqlStep("The view; the history table takes its name.",
                        SqlTemplate.of("DROP VIEW {{history}}").with("history", sql.history).render()));
    }

    /** Closed versions and tombstones keep their history_id; the context array becomes the five columns. */
    SqlStep copyClosedVersions() {
        return new SqlStep("Every closed version and tombstone, with its history_id.", SqlTemplate.of("""
                INSERT INTO {{history}} (history_id, {{columns}}, valid_from, valid_to, operation, chain_no, {{context_columns}})
                OVERRIDING SYSTEM VALUE
                SELECT c.history_id, {{values}}, c.valid_from, c.valid_to, c.operation, c.chain_no,
                       c.context[1], c.context[2], c.context[3], c.context[4], (c.context[5])::pg_catalog.jsonb
                  FROM {{closed}} AS c""")
                .with("history", sql.history).with("columns", insertColumns)
                .with("context_columns", HistorySql.CONTEXT_COLUMNS).with("values", fromClosed)
                .with("closed", closed).render());
    }

    /** Open versions are numbered after every id the closed-versions table gave out. */
    SqlStep continueIdentity() {
        return new SqlStep("Open versions, and versions archived from now on, are numbered after every id given out.",
                MigrationSql.continueIdentity(sql.history, closed));
    }

    /**
     * Each row of the table becomes its open version, exactly as the view presented it: the start clamped to the end
     * of the key's last closed version, the operation and chain number derived from it.
     */
    SqlStep copyCurrentVersions() {
        return new SqlStep("Each row of the table as its open version, as the view presented it.", SqlTemplate.of("""
                INSERT INTO {{history}} ({{columns}}, valid_from, valid_to, operation, chain_no, {{context_columns}})
                SELECT {{values}}, GREATEST(t.{{from}}, l.valid_to), 'infinity', ({{operation}})::pg_catalog.int2, {{chain}},
                       t.{{context}}[1], t.{{context}}[2], t.{{context}}[3], t.{{context}}[4], (t.{{context}}[5])::pg_catalog.jsonb
                  FROM {{table}} AS t
                  LEFT JOIN LATERAL (
                {{last_closed}}) AS l ON true""")
                .with("history", sql.history).with("columns", insertColumns)
                .with("context_columns", HistorySql.CONTEXT_COLUMNS).with("values", fromTable)
                .with("from", CurrentInTableSql.FROM).with("context", CurrentInTableSql.CONTEXT)
                .with("operation", CurrentInTableSql.OPERATION).with("chain", CurrentInTableSql.CHAIN)
                .with("table", table)
                .with("last_closed", new CurrentInTableSql(sql).lastClosed("h", "t.").indent(8).stripTrailing())
                .render());
    }

    SqlStep dropClosedVersions() {
        return new SqlStep("The closed versions, now copied.",
                SqlTemplate.of("DROP TABLE {{closed}}").with("closed", closed).render());
    }

    /** The current version's two columns, now copied: dropping a column rewrites nothing. */
    SqlStep dropCurrentColumns() {
        return new SqlStep("The current version's start and context, now in the history table.", SqlTemplate.of("""
                ALTER TABLE {{table}}
                    DROP COLUMN {{from}},
                    DROP COLUMN {{context}}""").with("table", table)
                .with("from", PgName.quote(CatalogReader.CURRENT_FROM_COLUMN))
                .with("context", PgName.quote(CatalogReader.CURRENT_CONTEXT_COLUMN)).render());
    }
}
