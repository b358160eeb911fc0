package io.tidemark.history.internal.ddl;

import io.tidemark.history.internal.catalog.Column;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The statements that move a history table (storage HISTORY_TABLE) into the closed-versions table and the rows of
 * the table (storage CURRENT_IN_TABLE). Pure: {@link StorageMigration} checks, orders and runs them.
 */
final class MigrationSql {

    /** A query returning (count, one key as text) of what would make the migration wrong; 0 means none. */
    record Check(String problem, String sql) {
    }

    private final HistorySql sql;
    private final String history;
    private final String closed;
    private final String versionedFromHistory;
    private final String closedColumns;
    private final String orphanValues;

    /**
     * @param sql     the target's SQL (storage CURRENT_IN_TABLE, the table's shape)
     * @param history the installed history table
     * @param held    the history table's columns
     * @param orphans its columns that are not versioned now, kept in the closed versions
     */
    MigrationSql(HistorySql sql, PgName history, Set<String> held, List<Column> orphans) {
        this.sql = sql;
        this.history = history.quoted();
        this.closed = sql.names.closedTable().quoted();
        // A column the table gained without evolve() has no past values: NULL, as evolve() would give them.
        this.versionedFromHistory = HistorySql.columnList(sql.shape.versioned(),
                c -> held.contains(c.name()) ? "h." + c.quoted() : "NULL")
                + orphans.stream().map(c -> ", h." + c.quoted()).collect(Collectors.joining());
        this.closedColumns = HistorySql.columnList(sql.shape.versioned(), Column::quoted)
                + orphans.stream().map(c -> ", " + c.quoted()).collect(Collectors.joining());
        this.orphanValues = orphans.stream().map(c -> "\n            OR h." + c.quoted() + " IS NOT NULL")
                .collect(Collectors.joining());
    }

    List<Check> consistencyChecks() {
        String keyText = "ROW" + HistorySql.row(sql.shape.keyColumns(), "{{alias}}.") + "::pg_catalog.text";
        return List.of(
                new Check("rows of the table without an open version in the history", SqlTemplate.of("""
                        SELECT pg_catalog.count(*), pg_catalog.min({{key_text}})
                          FROM {{table}} AS t
                         WHERE NOT EXISTS (SELECT FROM {{history}} AS h
                                            WHERE h.valid_to OPERATOR(pg_catalog.=) 'infinity' AND {{key_match}})""")
                        .with("key_text", keyText.replace("{{alias}}", "t")).with("table", sql.table)
                        .with("history", history).with("key_match", sql.keyMatch("h.", "t.")).render()),
                new Check("open versions in the history of keys that have no row in the table", SqlTemplate.of("""
                        SELECT pg_catalog.count(*), pg_catalog.min({{key_text}})
                          FROM {{history}} AS h
                         WHERE h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                           AND NOT EXISTS (SELECT FROM {{table}} AS t WHERE {{key_match}})""")
                        .with("key_text", keyText.replace("{{alias}}", "h")).with("table", sql.table)
                        .with("history", history).with("key_match", sql.keyMatch("h.", "t.")).render()),
                new Check("open versions that start before the end of their key's last closed version", SqlTemplate.of("""
                        SELECT pg_catalog.count(*), pg_catalog.min({{key_text}})
                          FROM {{history}} AS h
                         WHERE h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                           AND EXISTS (SELECT FROM {{history}} AS p
                                        WHERE {{key_match}} AND p.valid_to OPERATOR(pg_catalog.<>) 'infinity'
                                          AND p.valid_to OPERATOR(pg_catalog.>) h.valid_from)""")
                        .with("key_text", keyText.replace("{{alias}}", "h")).with("history", history)
                        .with("key_match", sql.keyMatch("p.", "h.")).render()));
    }

    /**
     * The consistency checks as one block for the script: it raises an error (and the transaction rolls back) where
     * {@link StorageMigration} refuses.
     */
    SqlStep consistencyCheckBlock(String object) {
        StringBuilder body = new StringBuilder();
        for (Check check : consistencyChecks()) {
            body.append(SqlTemplate.of("""
                        SELECT q.n, q.k INTO _n, _key FROM (
                    {{query}}) AS q(n, k);
                        IF _n OPERATOR(pg_catalog.>) 0 THEN
                            RAISE EXCEPTION 'tidemark: %: % (key %). Run checkInvariants() with the installed storage and repair the history first', {{problem}}, _n, _key
                                  USING ERRCODE = 'object_not_in_prerequisite_state';
                        END IF;
                    """).with("query", check.sql().indent(8).stripTrailing())
                    .with("problem", PgName.literal(object + ": " + check.problem())).render());
        }
        return new SqlStep("The history's open versions and the table's rows must pair up; else nothing is migrated.",
                SqlTemplate.of("""
                        DO {{tag}}
                        DECLARE
                            _n   bigint;
                            _key text;
                        BEGIN
                        {{body}}END
                        {{tag}}""").with("tag", HistorySql.TAG).with("body", body.toString()).render());
    }

    SqlStep analyzeClosedVersions() {
        return new SqlStep("Statistics for the look-ups below.", "ANALYZE " + closed);
    }

    String countRows() {
        return sql.countRows();
    }

    /** Every trigger and function of the history table shape, in either trigger mode. */
    List<SqlStep> dropHistoryTableShape() {
        return List.of(
                new SqlStep("The history table shape's triggers (row or statement mode, and TRUNCATE).",
                        dropGeneratedTriggers(sql)),
                new SqlStep("Its functions (the new shape creates its own).", SqlTemplate.of("""
                        DROP FUNCTION IF EXISTS {{write_function}}();
                        DROP FUNCTION IF EXISTS {{truncate_function}}();
                        DROP FUNCTION IF EXISTS {{as_of_function}}(pg_catalog.timestamptz)""")
                        .with("write_function", sql.names.writeFunction().quoted())
                        .with("truncate_function", sql.names.truncateFunction().quoted())
                        .with("as_of_function", sql.names.asOfFunction().quoted()).render()));
    }

    /** The script's first statement: at REPEATABLE READ its snapshot would miss writers that commit during the lock wait. */
    static SqlStep requireReadCommitted(String object) {
        return new SqlStep("At REPEATABLE READ or SERIALIZABLE the snapshot would be taken before the lock below, and\n"
                + "miss the changes of writers that commit while it is awaited.", SqlTemplate.of("""
                DO {{tag}}
                BEGIN
                    IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>) 'read committed' THEN
                        RAISE EXCEPTION 'tidemark: migrate the history of % at READ COMMITTED, not %', {{object}},
                              pg_catalog.current_setting('transaction_isolation')
                              USING ERRCODE = 'invalid_transaction_state';
                    END IF;
                END
                {{tag}}""").with("tag", HistorySql.TAG).with("object", PgName.literal(object)).render());
    }

    /**
     * Both tables in ACCESS EXCLUSIVE mode, the table first (the order a writer's trigger takes them in): adding the
     * current version's columns and dropping the history table would take that mode anyway, and taking it first
     * means no lock is upgraded halfway.
     */
    static SqlStep lock(PgName table, PgName history) {
        return new SqlStep("The table and its history, until commit: a writer in flight finishes first (its change is\n"
                + "migrated), later writers and readers wait, and their writes are archived by the new triggers.",
                SqlTemplate.of("LOCK TABLE {{table}}, {{history}} IN ACCESS EXCLUSIVE MODE")
                        .with("table", table.quoted()).with("history", history.quoted()).render());
    }

    /** Closed versions and tombstones keep their history_id; the context columns become the context array. */
    SqlStep copyClosedVersions() {
        return new SqlStep("Every closed version and tombstone, with its history_id.", SqlTemplate.of("""
                INSERT INTO {{closed}} (history_id, {{closed_columns}}, valid_from, valid_to, operation, chain_no, context)
                OVERRIDING SYSTEM VALUE
                SELECT h.history_id, {{versioned}}, h.valid_from, h.valid_to, h.operation, h.chain_no, {{context}}
                  FROM {{history}} AS h
                 WHERE h.valid_to OPERATOR(pg_catalog.<>) 'infinity'""")
                .with("closed", closed).with("closed_columns", closedColumns).with("versioned", versionedFromHistory)
                .with("context", context("h")).with("history", history).render());
    }

    /**
     * New closed versions are numbered after every id the history table gave out, open versions' included (a
     * history_id is never given twice, even to a version the migration does not keep as a row).
     */
    SqlStep continueIdentity() {
        return new SqlStep("Versions archived from now on are numbered after every id the history table gave out.",
                continueIdentity(closed, history));
    }

    /** {@code target}'s identity continues after its own ids and every id {@code source}'s identity gave out. */
    static String continueIdentity(String target, String source) {
        // is_called true whenever an id was given: pg_sequence_last_value() answers NULL for a sequence set with
        // is_called false, so a later migration back would not see the ids this one accounts for.
        return SqlTemplate.of("""
                SELECT pg_catalog.setval(pg_catalog.pg_get_serial_sequence({{target_literal}}, 'history_id'),
                       GREATEST(m.given, 1), m.given OPERATOR(pg_catalog.>=) 1)
                  FROM (SELECT GREATEST((SELECT pg_catalog.max(t.history_id) FROM {{target}} AS t),
                                        pg_catalog.pg_sequence_last_value(pg_catalog.pg_get_serial_sequence({{source_literal}}, 'history_id')::pg_catalog.regclass),
                                        0) AS given) AS m""")
                .with("target_literal", PgName.literal(target)).with("target", target)
                .with("source_literal", PgName.literal(source)).render();
    }

    /** Every trigger either shape generates on the table, in either trigger mode: dropped before the other's. */
    static String dropGeneratedTriggers(HistorySql sql) {
        return sql.names.generatedTriggers().stream().map(trigger -> SqlTemplate.of("DROP TRIGGER IF EXISTS {{trigger}} ON {{table}}")
                        .with("trigger", PgName.quote(trigger)).with("table", sql.table).render())
                .collect(Collectors.joining(";\n"));
    }

    /**
     * An open version is closed at the migration instant and continued by an identical current version when the new
     * shape could not present it as it is: its earlier versions were pruned (its operation or chain number is not
     * what the key's last closed version implies: the view derives both from it), or it holds a value in a column
     * that is not versioned any more (an orphan, or the opt-in session user and transaction id: the current
     * version has no place for them). The closed part keeps everything; no instant answers differently.
     */
    SqlStep splitPrunedVersions() {
        return new SqlStep("Open versions the new shape cannot present as they are (earlier versions pruned, or a value in\n"
                + "a column no longer versioned): closed now, continued by an identical current version.",
                SqlTemplate.of("""
                        INSERT INTO {{closed}} ({{closed_columns}}, valid_from, valid_to, operation, chain_no, context)
                        SELECT {{versioned}}, h.valid_from, GREATEST(pg_catalog.now(), h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond'),
                               h.operation, h.chain_no, {{context}}
                          FROM {{history}} AS h
                          LEFT JOIN LATERAL (
                                SELECT l.operation, l.chain_no
                                  FROM {{closed}} AS l
                                 WHERE {{key_match}}
                                 ORDER BY l.valid_from DESC, l.valid_to DESC
                                 LIMIT 1) AS l ON true
                         WHERE h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                           AND (h.operation OPERATOR(pg_catalog.<>) (CASE WHEN l.operation IS NULL OR l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 2 END)
                                OR h.chain_no OPERATOR(pg_catalog.<>) COALESCE(l.chain_no OPERATOR(pg_catalog.+) CASE WHEN l.operation OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 0 END, 1){{orphan_values}})""")
                        .with("closed", closed).with("closed_columns", closedColumns)
                        .with("versioned", versionedFromHistory).with("context", context("h"))
                        .with("history", history).with("key_match", sql.keyMatch("l.", "h."))
                        .with("orphan_values", orphanValues).render());
    }

    /**
     * Each row takes its open version's start and context; a split version starts where its closed part ended.
     * The table's own UPDATE triggers are paused around it by the caller: this is not an application change.
     */
    SqlStep moveOpenVersions() {
        return new SqlStep("Each row's current version: the start and change context of its open version.",
                SqlTemplate.of("""
                        UPDATE {{table}} AS t
                           SET {{from}} = GREATEST(h.valid_from, s.valid_to), {{context_column}} = {{context}}
                          FROM {{history}} AS h
                          LEFT JOIN LATERAL (
                                SELECT l.valid_to
                                  FROM {{closed}} AS l
                                 WHERE {{split_match}} AND l.valid_from OPERATOR(pg_catalog.=) h.valid_from
                                 ORDER BY l.valid_to DESC
                                 LIMIT 1) AS s ON true
                         WHERE h.valid_to OPERATOR(pg_catalog.=) 'infinity' AND {{key_match}}""")
                        .with("table", sql.table).with("from", CurrentInTableSql.FROM)
                        .with("context_column", CurrentInTableSql.CONTEXT).with("context", context("h"))
                        .with("history", history).with("closed", closed)
                        .with("split_match", sql.keyMatch("l.", "h.")).with("key_match", sql.keyMatch("h.", "t."))
                        .render());
    }

    SqlStep dropHistoryTable() {
        return new SqlStep("The history table, now copied; its name becomes the view's.",
                SqlTemplate.of("DROP TABLE {{history}}").with("history", history).render());
    }

    /** The five context columns as the context array, extra as jsonb text (as the triggers write it). */
    private static String context(String alias) {
        return SqlTemplate.of("ARRAY[{{a}}.changed_by, {{a}}.changed_by_name, {{a}}.correlation_id, {{a}}.reason,"
                + " ({{a}}.extra)::pg_catalog.text]").with("a", alias).render();
    }
}
