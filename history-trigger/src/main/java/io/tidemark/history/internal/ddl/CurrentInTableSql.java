package io.tidemark.history.internal.ddl;

import io.tidemark.history.TriggerMode;
import io.tidemark.history.TruncatePolicy;
import io.tidemark.history.internal.catalog.CatalogObjects;
import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The SQL of {@link io.tidemark.history.HistoryStorage#CURRENT_IN_TABLE}: the current version of every row stays in
 * the table, which carries its start and its change context in two columns filled by column defaults, so an INSERT
 * writes no history (its trigger only resets a start the client supplied). UPDATE and DELETE append the superseded
 * version (and a DELETE its tombstone) to the closed-versions table: one inserted row per change, no history row is
 * ever updated. A view named like the history table presents closed and current versions in the history table's
 * columns, row for row.
 *
 * <p>A version's operation (1 insert, 2 update) and chain number are not stored with the current row: they follow
 * from the key's last closed row (none or a tombstone: the row was inserted, and starts the next chain). Its start is
 * the later of the row's own start and the end of that last closed row, which is the insert clamp of the history
 * table shape, applied where the version is read or archived instead of where it is written (an INSERT looks
 * nothing up: that is what keeps it cheap).
 */
final class CurrentInTableSql {

    static final String FROM = PgName.quote(CatalogReader.CURRENT_FROM_COLUMN);
    static final String CONTEXT = PgName.quote(CatalogReader.CURRENT_CONTEXT_COLUMN);

    private final HistorySql sql;
    private final String closed;
    private final String table;

    CurrentInTableSql(HistorySql sql) {
        this.sql = sql;
        this.closed = sql.names.closedTable().quoted();
        this.table = sql.table;
    }

    /**
     * The transaction's change context as one array (changed_by, changed_by_name, correlation_id, reason, extra;
     * absent or empty settings are NULL). extra is cast to jsonb and back so that a malformed value fails the write,
     * as it does in the history table shape. Every operator is qualified: this expression is also a column default
     * and a trigger condition, parsed under the installing session's search_path.
     */
    String contextExpression() {
        String p = sql.config.settingsPrefix();
        return SqlTemplate.of("ARRAY[{{changed_by}},\n        {{changed_by_name}},\n        {{correlation_id}},\n"
                        + "        {{reason}},\n        (({{extra}})::pg_catalog.jsonb)::pg_catalog.text]")
                .with("changed_by", HistorySql.setting(p + ".changed_by"))
                .with("changed_by_name", HistorySql.setting(p + ".changed_by_name"))
                .with("correlation_id", HistorySql.setting(p + ".correlation_id"))
                .with("reason", HistorySql.setting(p + ".reason"))
                .with("extra", HistorySql.setting(p + ".extra"))
                .render();
    }

    // --- the table's own columns ---------------------------------------------------------------------------------

    SqlStep addCurrentColumns() {
        // No CHECK on the context: the executor prepares a CHECK's expression for every statement, which cost a
        // one-row INSERT more than the rest of the shape together. The insert function checks it instead.
        return new SqlStep("The current version stays in the table: its start and its change context are two columns\n"
                + "filled by their defaults, so an INSERT writes no history. now() and current_setting() are\n"
                + "stable, so existing rows get the install instant and context without a table rewrite.",
                SqlTemplate.of("""
                        ALTER TABLE {{table}}
                            ADD COLUMN {{from}} timestamptz NOT NULL DEFAULT pg_catalog.now(),
                            ADD COLUMN {{context}} text[] DEFAULT {{context_expression}}""")
                        .with("table", table).with("from", FROM).with("context", CONTEXT)
                        .with("context_expression", contextExpression()).render());
    }

    /** evolve: the defaults as the configuration generates them (a changed settingsPrefix changes the context's). */
    SqlStep setDefaults() {
        return new SqlStep("The current version's defaults, as the configuration generates them.",
                SqlTemplate.of("""
                        ALTER TABLE {{table}}
                            ALTER COLUMN {{from}} SET DEFAULT pg_catalog.now(),
                            ALTER COLUMN {{context}} SET DEFAULT {{context_expression}}""")
                        .with("table", table).with("from", FROM).with("context", CONTEXT)
                        .with("context_expression", contextExpression()).render());
    }

    /**
     * Whether a default, as PostgreSQL deparses it ({@code pg_get_expr}), reads the configured settings. The deparsed
     * text is not the generated text, so the check is on what can drift: the setting names.
     */
    boolean contextDefaultMatches(String deparsed) {
        String p = sql.config.settingsPrefix();
        return deparsed != null && java.util.stream.Stream.of("changed_by", "changed_by_name", "correlation_id",
                        "reason", "extra")
                .allMatch(name -> deparsed.contains(PgName.literal(p + "." + name)));
    }

    /** A CHECK constraint an earlier version generated and this one no longer does. */
    record ObsoleteCheck(PgName table, String name) {
        SqlStep drop() {
            return new SqlStep("A constraint of an earlier version, no longer used.",
                    SqlTemplate.of("ALTER TABLE {{table}} DROP CONSTRAINT {{name}}")
                            .with("table", table.quoted()).with("name", PgName.quote(name)).render());
        }
    }

    /** What the definitions of the CHECKs earlier versions generated contain, as pg_get_constraintdef prints them. */
    private static final List<String> OBSOLETE_CONTEXT_CHECKS = List.of(
            "cardinality(" + CatalogReader.CURRENT_CONTEXT_COLUMN + ")");
    private static final List<String> OBSOLETE_CLOSED_CHECKS = List.of(
            "(valid_to < 'infinity'", "(operation = ANY (ARRAY[1, 2, 3]))", "(valid_from <= valid_to)");

    /**
     * The CHECKs that earlier versions put on the context column (five elements, the fifth JSON) and on the closed
     * versions (their period and operation), recognised by what they read, since PostgreSQL chose their names. Each
     * was prepared again for every statement that wrote the table; the insert function checks the context now, and
     * the closed versions are written by the generated functions only.
     */
    List<ObsoleteCheck> obsoleteChecks(Connection c) throws SQLException {
        List<ObsoleteCheck> obsolete = new ArrayList<>();
        addMatching(c, HistoryNames.table(sql.config), OBSOLETE_CONTEXT_CHECKS, obsolete);
        addMatching(c, sql.names.closedTable(), OBSOLETE_CLOSED_CHECKS, obsolete);
        return obsolete;
    }

    private static void addMatching(Connection c, PgName table, List<String> markers, List<ObsoleteCheck> into)
            throws SQLException {
        CatalogObjects.checks(c, table).forEach((name, definition) -> {
            if (markers.stream().anyMatch(definition::contains)) {
                into.add(new ObsoleteCheck(table, name));
            }
        });
    }

    /** Only with seedValidFrom: the existing rows' current versions start at the configured column. */
    SqlStep seedFrom(String column) {
        return new SqlStep("Every existing row's current version starts at column " + column + " (install time when NULL).",
                SqlTemplate.of("UPDATE {{table}} AS t SET {{from}} = COALESCE(t.{{column}}::timestamptz, pg_catalog.now())")
                        .with("table", table).with("from", FROM).with("column", PgName.quote(column)).render());
    }

    // --- the closed versions -------------------------------------------------------------------------------------

    SqlStep createClosedTable() {
        StringBuilder versioned = new StringBuilder();
        for (Column c : sql.shape.versioned()) {
            versioned.append("    ").append(c.quoted()).append(' ').append(c.typeDefinition()).append(",\n");
        }
        return new SqlStep("Superseded versions and tombstones of " + sql.shape.table() + ", appended by UPDATE, DELETE and\n"
                + "TRUNCATE and never updated. No row here is open: the current versions are the table's rows.\n"
                + "context: changed_by, changed_by_name, correlation_id, reason, extra (as text).\n"
                + "No CHECK constraints: PostgreSQL prepares them for every statement that writes the table, which\n"
                + "every UPDATE and DELETE of " + sql.shape.table() + " would pay. Only the generated functions write\n"
                + "here, and they compute valid_from <= valid_to < 'infinity' and operation 1, 2 or 3 (insert,\n"
                + "update, tombstone) by construction; TemporalTable.checkInvariants() verifies the periods.",
                SqlTemplate.of("""
                        CREATE TABLE {{closed}} (
                            history_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                        {{versioned}}    valid_from      timestamptz NOT NULL,
                            valid_to        timestamptz NOT NULL,
                            operation       smallint    NOT NULL,
                            chain_no        integer     NOT NULL,
                            context         text[]
                        )""").with("closed", closed).with("versioned", versioned.toString()).render());
    }

    List<SqlStep> createIndexes() {
        List<SqlStep> steps = new ArrayList<>();
        steps.add(index("Closed versions of one key, newest first: the triggers' look-up of the key's last closed row\n"
                        + "and per-key queries.", false, sql.names.closedKeyIndex(),
                SqlTemplate.of("({{keys}}, valid_from DESC, valid_to DESC)").with("keys", sql.keyList("")).render()));
        steps.add(index("One start per life of a key: a REPEATABLE READ writer that re-inserted a key another\n"
                        + "transaction deleted unseen, and then changes it, fails with a serialization error instead of\n"
                        + "archiving a version that overlaps the other's. (One open version per key is the table's\n"
                        + "primary key.)", true, sql.names.closedChainIndex(),
                SqlTemplate.of("({{keys}}, chain_no) WHERE operation = 1").with("keys", sql.keyList("")).render()));
        if (sql.config.periodIndex()) {
            steps.add(index("Periods as ranges, for whole-table as-of snapshots and window queries.", false,
                    sql.names.closedPeriodIndex(), "USING gist (tstzrange(valid_from, valid_to))"));
        }
        return steps;
    }

    private SqlStep index(String comment, boolean unique, String name, String definition) {
        return new SqlStep(comment, SqlTemplate.of("CREATE {{unique}}INDEX IF NOT EXISTS {{name}} ON {{closed}} {{definition}}")
                .with("unique", unique ? "UNIQUE " : "").with("name", PgName.quote(name)).with("closed", closed)
                .with("definition", definition).render());
    }

    // --- the view ------------------------------------------------------------------------------------------------

    /** The key's last closed row, newest first (a tombstone sorts before a version it ends at the same instant). */
    String lastClosed(String alias, String keyOf) {
        return SqlTemplate.of("""
                SELECT {{alias}}.valid_to, {{alias}}.operation, {{alias}}.chain_no
                  FROM {{closed}} AS {{alias}}
                 WHERE {{key_match}}
                 ORDER BY {{alias}}.valid_from DESC, {{alias}}.valid_to DESC
                 LIMIT 1""")
                .with("alias", alias).with("closed", closed)
                .with("key_match", sql.keyMatch(alias + ".", keyOf)).render();
    }

    /** Operation of a current (or just superseded) version from the key's last closed row {@code l}. */
    static final String OPERATION = "CASE WHEN l.operation IS NULL OR l.operation OPERATOR(pg_catalog.=) 3"
            + " THEN 1 ELSE 2 END";
    /** Chain number from the key's last closed row {@code l}: a tombstone ends a chain. */
    static final String CHAIN = "COALESCE(l.chain_no OPERATOR(pg_catalog.+) CASE WHEN l.operation"
            + " OPERATOR(pg_catalog.=) 3 THEN 1 ELSE 0 END, 1)";

    SqlStep createView() {
        return createView(List.of());
    }

    /** The view; {@code orphans} are columns dropped from the table that the closed versions still hold. */
    SqlStep createView(List<Column> orphans) {
        String closedColumns = HistorySql.columnList(sql.shape.versioned(), c -> "c." + c.quoted())
                + orphans.stream().map(c -> ", c." + c.quoted()).collect(java.util.stream.Collectors.joining());
        String currentColumns = HistorySql.columnList(sql.shape.versioned(), c -> "t." + c.quoted())
                + orphans.stream().map(c -> ", NULL::" + c.type()).collect(java.util.stream.Collectors.joining());
        return new SqlStep("Every version in the history table shape, row for row: the closed versions, and each row of\n"
                + "the table as its open version (history_id NULL). Its start is clamped to the end of the key's last\n"
                + "closed row, so a re-insert never overlaps the versions before it. tidemark_valid_from: the start\n"
                + "as stored, before that clamp; a condition on it is pushed below the look-up.",
                SqlTemplate.of("""
                        CREATE VIEW {{history}} AS
                        SELECT c.history_id, {{closed_columns}}, c.valid_from, c.valid_to, c.operation, c.chain_no,
                               c.context[1] AS changed_by, c.context[2] AS changed_by_name, c.context[3] AS correlation_id,
                               c.context[4] AS reason, c.context[5]::pg_catalog.jsonb AS extra,
                               c.valid_from AS {{from}}
                          FROM {{closed}} AS c
                        UNION ALL
                        SELECT NULL::bigint, {{current_columns}}, GREATEST(t.{{from}}, l.valid_to), 'infinity'::timestamptz,
                               ({{operation}})::smallint, {{chain}},
                               t.{{context}}[1], t.{{context}}[2], t.{{context}}[3], t.{{context}}[4], t.{{context}}[5]::pg_catalog.jsonb,
                               t.{{from}}
                          FROM {{table}} AS t
                          LEFT JOIN LATERAL (
                        {{last_closed}}) AS l ON true""")
                        .with("history", sql.history).with("closed_columns", closedColumns).with("closed", closed)
                        .with("current_columns", currentColumns).with("from", FROM).with("context", CONTEXT)
                        .with("operation", OPERATION).with("chain", CHAIN).with("table", table)
                        .with("last_closed", indent(lastClosed("h", "t."), "        ")).render());
    }

    /** The view's column names, in order, for the versioned columns and orphans it was built with. */
    static List<String> viewColumns(List<Column> versioned, List<Column> orphans) {
        List<String> columns = new ArrayList<>();
        columns.add("history_id");
        versioned.forEach(c -> columns.add(c.name()));
        orphans.forEach(c -> columns.add(c.name()));
        columns.addAll(List.of("valid_from", "valid_to", "operation", "chain_no", "changed_by", "changed_by_name",
                "correlation_id", "reason", "extra", CatalogReader.CURRENT_FROM_COLUMN));
        return columns;
    }

    SqlStep addClosedColumn(String definition) {
        return new SqlStep("A column new to the table joins the closed versions; older ones have NULL.",
                SqlTemplate.of("ALTER TABLE {{closed}} ADD COLUMN {{definition}}")
                        .with("closed", closed).with("definition", definition).render());
    }

    /**
     * Without CASCADE: a view of the application's that reads this one makes the drop fail with an error naming it,
     * instead of vanishing with it.
     */
    SqlStep dropView() {
        return new SqlStep("The view is rebuilt when the versioned columns change.",
                SqlTemplate.of("DROP VIEW IF EXISTS {{history}}").with("history", sql.history).render());
    }

    /**
     * uninstall: the table keeps its two columns, which hold the current versions' start and context (the part of
     * the history not in the closed versions), but no longer fills them: without their defaults and the start's NOT
     * NULL, an INSERT that leaves them out leaves them NULL and nothing else about the table's behaviour changes.
     */
    SqlStep releaseCurrentColumns() {
        return new SqlStep("The table's two columns stay (with their values) but are no longer filled.",
                SqlTemplate.of("""
                        ALTER TABLE {{table}}
                            ALTER COLUMN {{from}} DROP DEFAULT,
                            ALTER COLUMN {{from}} DROP NOT NULL,
                            ALTER COLUMN {{context}} DROP DEFAULT""")
                        .with("table", table).with("from", FROM).with("context", CONTEXT).render());
    }

    // --- the row triggers ----------------------------------------------------------------------------------------

    /**
     * The insert trigger's function: a version starts at the transaction's now(), whatever the client supplied, and a
     * supplied context's extra must be JSON, or the view could not read it (the column default casts the setting
     * through jsonb; a client may write the column itself). A context given as a column value is no more a forgery
     * than one given as settings, which every writer can push, so it is kept; an array of another length reads as
     * NULLs or is cut.
     *
     * <p>Why a function called for every row rather than a WHEN condition or a CHECK: PostgreSQL prepares a trigger's
     * WHEN and a CHECK's expression again for every statement, while a PL/pgSQL function keeps its plans for the
     * session; on a one-row INSERT either cost more than this call. It is not SECURITY DEFINER (and needs no pinned
     * search_path, every name in it being qualified): it writes nothing but the row, so it needs no rights, and
     * running as its owner would cost every call.
     *
     * <p>The common row takes the defaults, and one condition returns it: PL/pgSQL prepares each expression it
     * evaluates once per transaction, so on a one-row INSERT every further IF is paid again.
     */
    String insertBody() {
        return SqlTemplate.of("""

                BEGIN
                    IF NEW.{{from}} OPERATOR(pg_catalog.=) pg_catalog.now() AND NEW.{{context}}[5] IS NULL THEN
                        RETURN NEW;  -- the column defaults: nothing to reset or check
                    END IF;
                    IF NEW.{{from}} IS NULL OR NEW.{{from}} OPERATOR(pg_catalog.<>) pg_catalog.now() THEN
                        NEW.{{from}} := pg_catalog.now();
                    END IF;
                    IF NEW.{{context}}[5] IS NOT NULL THEN
                        BEGIN
                            PERFORM (NEW.{{context}}[5])::pg_catalog.jsonb;
                        EXCEPTION WHEN invalid_text_representation THEN
                            RAISE EXCEPTION 'tidemark: the change context of a row inserted into %.% is malformed: its extra (element 5 of {{context_name}}) is not JSON',
                                  TG_TABLE_SCHEMA, TG_TABLE_NAME
                                  USING ERRCODE = 'check_violation', DETAIL = SQLERRM;
                        END;
                    END IF;
                    RETURN NEW;
                END;
                """).with("from", FROM).with("context", CONTEXT)
                .with("context_name", CatalogReader.CURRENT_CONTEXT_COLUMN).render();
    }

    List<SqlStep> insertFunction() {
        return List.of(sql.function(sql.names.insertFunction(), insertBody(),
                        "The insert trigger's function: every new version starts at the transaction's now(), and a\n"
                                + "context supplied with the row must have a JSON extra. It writes nothing but the row, so it\n"
                                + "runs with the writer's rights; every name in it is qualified, so the caller's search_path\n"
                                + "cannot substitute an object of its own.", false),
                new SqlStep("Only the trigger calls it.", HistorySql.revokeFromPublic(sql.names.insertFunction().quoted())));
    }

    String writeBody() {
        return SqlTemplate.of("""

                DECLARE
                    _now     pg_catalog.timestamptz := pg_catalog.now();
                    _context pg_catalog.text[] := {{context_expression}};
                    _last_to         pg_catalog.timestamptz;
                    _last_operation  pg_catalog.int2;
                    _chain           pg_catalog.int4;
                    _operation       pg_catalog.int2;
                    _from            pg_catalog.timestamptz;
                    _to              pg_catalog.timestamptz;
                    _rows            pg_catalog.int8;{{statement_declarations}}
                BEGIN
                {{table_guard}}{{delete_branch}}
                    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE'
                       AND (NEW.{{from}} OPERATOR(pg_catalog.<>) OLD.{{from}} OR NEW.{{from}} IS NULL
                            OR NOT COALESCE(NEW.{{context}} OPERATOR(pg_catalog.=) OLD.{{context}}, NEW.{{context}} IS NULL AND OLD.{{context}} IS NULL))
                       AND {{same_key}} AND {{unchanged}} THEN
                        -- No versioned column changed, only the version's own columns: they cannot be rewritten.
                        NEW.{{from}} := OLD.{{from}};
                        NEW.{{context}} := OLD.{{context}};
                        RETURN NEW;
                    END IF;
                    -- Archive the superseded version: it starts no earlier than the end of the key's last closed row
                    -- (the insert clamp) and ends no earlier than 1 microsecond after it starts. In READ COMMITTED
                    -- the look-up sees what a concurrent writer of the key committed while this one waited for the
                    -- row lock. The chain-start index turns an unseen concurrent chain (REPEATABLE READ) into a
                    -- serialization error. Small statements, whose plans PL/pgSQL
                    -- caches.
                    SELECT l.valid_to, l.operation, l.chain_no INTO _last_to, _last_operation, _chain
                      FROM (
                {{last_closed}}) AS l;
                    -- (Both are NOT NULL columns once a closed row exists; IS DISTINCT FROM would resolve = through
                    -- the caller's search_path.)
                    IF _last_operation OPERATOR(pg_catalog.<>) 3
                       AND OLD.{{from}} OPERATOR(pg_catalog.<>) _last_to THEN
                        -- A version that follows a closed, non-tombstone row starts exactly where that row ended.
                        -- If not, this snapshot missed a concurrent change of the key (a REPEATABLE READ writer
                        -- re-inserted a key another transaction deleted unseen): archiving would overlap it.
                {{stale_snapshot}}
                    END IF;
                    _from := GREATEST(OLD.{{from}}, _last_to);
                    _to := GREATEST(_now, _from OPERATOR(pg_catalog.+) interval '1 microsecond');
                    IF _last_operation IS NULL OR _last_operation OPERATOR(pg_catalog.=) 3 THEN
                        _operation := 1;  -- the version began with an insert, and a new chain
                        _chain := COALESCE(_chain OPERATOR(pg_catalog.+) 1, 1);
                    ELSE
                        _operation := 2;
                    END IF;
                    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' AND {{same_key}} THEN
                {{archive_version}}
                        -- The next version starts exactly where the archived one ended.
                        NEW.{{from}} := _to;
                        NEW.{{context}} := _context;
                        RETURN NEW;
                    END IF;
                    -- The old key of a key update: the version, and the tombstone (an empty period) that ends the
                    -- chain, in one statement.
                {{archive_version_and_tombstone}}
                    -- The new key of a key update starts a chain, as an insert.
                    NEW.{{from}} := _now;
                    NEW.{{context}} := _context;
                    RETURN NEW;
                END;
                """)
                .with("context_expression", contextExpression().replace("\n        ", "\n                                  "))
                .with("table_guard", sql.tableGuard())
                .with("statement_declarations", deletesPerStatement()
                        ? "\n    _stale_key       pg_catalog.text;" : "")
                .with("delete_branch", deletesPerStatement() ? statementDelete() : rowDelete())
                .with("archive_version", indent(archiveStatements(false), "        "))
                .with("archive_version_and_tombstone", indent(archiveStatements(true), "    "))
                .with("from", FROM)
                .with("context", CONTEXT)
                .with("same_key", sql.keyMatch("NEW.", "OLD."))
                .with("unchanged", sql.unchanged(sql.shape.comparable(), "NEW.", "OLD.", "           AND "))
                .with("last_closed", indent(lastClosed("h", "OLD."), "            "))
                .with("stale_snapshot", indent(staleSnapshot(oldKeyText()), "        "))
                .render();
    }

    /** {@link TriggerMode#STATEMENT}: DELETE is archived once per statement, from its transition table. */
    private boolean deletesPerStatement() {
        return sql.config.triggerMode() == TriggerMode.STATEMENT;
    }

    /** The key of the row the trigger fired for, as text, for messages. */
    private String oldKeyText() {
        return HistorySql.row(sql.shape.keyColumns(), "OLD.") + "::pg_catalog.text";
    }

    /** The transition table of the statement-level DELETE trigger: the rows the statement deleted. */
    static final String DELETED_ROWS = "tidemark_deleted";

    /**
     * The write function's branch for the statement-level DELETE trigger ({@link TriggerMode#STATEMENT}): every
     * deleted row's version and its tombstone, computed as the row branch computes them for one row, in one INSERT
     * for the whole statement, each key's last closed row looked up once. A row whose start does not follow its
     * key's last closed row (its snapshot missed a change of the key) is left out; outside READ COMMITTED, where that
     * can happen, the keys are looked up once more beforehand to fail naming the key. A version that would start a
     * chain another transaction started unseen (REPEATABLE READ) meets PostgreSQL's own check of ON CONFLICT, which
     * fails the statement with its serialization error first. The row count is the guard behind both: any row left
     * out fails the whole statement with a serialization error.
     */
    private String statementDelete() {
        return SqlTemplate.of("""

                    IF TG_LEVEL OPERATOR(pg_catalog.=) 'STATEMENT' THEN
                        -- A DELETE statement: each deleted row's version and its tombstone, as the row branch below
                        -- archives them for one row, in one statement for all of them.
                        IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.=) 'read committed' THEN
                            -- Here no other transaction can have started a chain unseen; the index still refuses it.
                {{archive}};
                        ELSE
                            SELECT {{stale_key}}::pg_catalog.text INTO _stale_key
                              FROM {{deleted_rows}} AS o
                              JOIN LATERAL (
                {{last_closed}}) AS l ON true
                             WHERE {{stale}}
                             LIMIT 1;
                            IF _stale_key IS NOT NULL THEN
                {{stale_snapshot}}
                            END IF;
                {{archive_on_conflict}};
                        END IF;
                        GET DIAGNOSTICS _rows = ROW_COUNT;
                        IF _rows OPERATOR(pg_catalog.<>) (SELECT 2 OPERATOR(pg_catalog.*) pg_catalog.count(*) FROM {{deleted_rows}}) THEN
                            RAISE EXCEPTION 'tidemark: a concurrent transaction changed the history of %.% for a key this statement deleted, unseen by this snapshot',
                                  TG_TABLE_SCHEMA, TG_TABLE_NAME
                                  USING ERRCODE = 'serialization_failure';
                        END IF;
                        RETURN NULL;
                    END IF;
                """)
                .with("archive", indent(deletedArchive(DELETED_ROWS, false), "            "))
                .with("archive_on_conflict", indent(deletedArchive(DELETED_ROWS, true), "            "))
                .with("stale_key", HistorySql.row(sql.shape.keyColumns(), "o."))
                .with("stale_snapshot", indent(staleSnapshot("_stale_key"), "                "))
                .with("deleted_rows", DELETED_ROWS)
                .with("last_closed", indent(lastClosed("h", "o."), "                    "))
                .with("stale", STALE)
                .render();
    }

    /**
     * The write function's branch for the row-level DELETE trigger: the version and its tombstone in one INSERT that
     * also looks up the key's last closed row (one executor start-up where a look-up and an INSERT took two, and a
     * few PL/pgSQL expressions fewer, each of which is prepared again in every transaction). The row count tells what
     * was left out: both rows when this snapshot missed a change of the key; the version alone if it would start a
     * chain another transaction started unseen (REPEATABLE READ), which PostgreSQL's own check of ON CONFLICT refuses
     * first with its serialization error, so that count is a second guard.
     */
    private String rowDelete() {
        return SqlTemplate.of("""

                    IF TG_OP OPERATOR(pg_catalog.=) 'DELETE' THEN
                        -- The version and its tombstone (an empty period) that ends the chain, in one statement
                        -- that also looks up the key's last closed row.
                        IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.=) 'read committed' THEN
                            -- Here no other transaction can have started this chain unseen; the index still refuses it.
                {{archive}};
                        ELSE
                {{archive_on_conflict}};
                        END IF;
                        GET DIAGNOSTICS _rows = ROW_COUNT;
                        IF _rows OPERATOR(pg_catalog.<>) 2 THEN
                            IF _rows OPERATOR(pg_catalog.=) 0 THEN
                {{stale_snapshot}}
                            END IF;
                {{chain_conflict}}
                        END IF;
                        RETURN NULL;  -- an AFTER trigger: the result is ignored
                    END IF;
                """)
                .with("archive", indent(deletedArchive(DELETED_ROW, false), "            "))
                .with("archive_on_conflict", indent(deletedArchive(DELETED_ROW, true), "            "))
                .with("stale_snapshot", indent(staleSnapshot(oldKeyText()), "                "))
                .with("chain_conflict", indent(chainConflict(), "            "))
                .render();
    }

    /** The row-level DELETE trigger's one deleted row, as a relation for {@link #deletedArchive}. */
    private static final String DELETED_ROW = "(SELECT OLD.*)";

    /**
     * A row of the deleted rows {@code o} whose start does not follow its key's last closed row {@code l}, which is
     * not a tombstone: the row's snapshot missed a change of the key.
     */
    private static final String STALE = "l.operation OPERATOR(pg_catalog.<>) 3 AND o." + FROM
            + " OPERATOR(pg_catalog.<>) l.valid_to";

    /**
     * The INSERT of each deleted row's version and tombstone, the key's last closed row looked up in the same
     * statement, stale rows left out: the rows {@code o} are the transition table (statement trigger) or the one
     * deleted row (row trigger).
     */
    private String deletedArchive(String rows, boolean onConflict) {
        return SqlTemplate.of("""
                INSERT INTO {{closed}} ({{versioned}}, valid_from, valid_to, operation, chain_no, context)
                SELECT {{o_values}}, v.valid_from, v.valid_to, v.operation, e.chain_no, v.context
                  FROM {{deleted_rows}} AS o
                  LEFT JOIN LATERAL (
                {{last_closed}}) AS l ON true
                 CROSS JOIN LATERAL (SELECT GREATEST(o.{{from}}, l.valid_to) AS f) AS s
                 CROSS JOIN LATERAL (SELECT GREATEST(_now, s.f OPERATOR(pg_catalog.+) interval '1 microsecond') AS t,
                                            {{chain}} AS chain_no) AS e
                 CROSS JOIN LATERAL (VALUES (s.f, e.t, ({{operation}})::pg_catalog.int2, o.{{context}}),
                                            (e.t, e.t, 3::pg_catalog.int2, _context))
                                    AS v(valid_from, valid_to, operation, context)
                 WHERE NOT COALESCE({{stale}}, false){{on_conflict}}""")
                .with("closed", closed)
                .with("versioned", HistorySql.columnList(sql.shape.versioned(), Column::quoted))
                .with("o_values", HistorySql.columnList(sql.shape.versioned(), c -> "o." + c.quoted()))
                .with("deleted_rows", rows)
                .with("last_closed", indent(lastClosed("h", "o."), "        "))
                .with("from", FROM)
                .with("chain", CHAIN)
                .with("operation", OPERATION)
                .with("context", CONTEXT)
                .with("stale", STALE)
                .with("on_conflict", onConflict ? "\n " + onConflictChainStart() : "")
                .render();
    }

    /**
     * The write function's archiving of the superseded version (and with {@code tombstone}, of the tombstone that ends
     * its chain, in the same statement). A version that starts a chain under REPEATABLE READ may collide with a chain
     * another transaction started unseen: there the insert leaves it out, and the row count tells.
     */
    private String archiveStatements(boolean tombstone) {
        return SqlTemplate.of("""
                IF _operation OPERATOR(pg_catalog.=) 2
                   OR pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.=) 'read committed' THEN
                    -- Here no other transaction can have started this chain unseen; the index still refuses it.
                {{archive}};
                ELSE
                {{archive_on_conflict}};
                    GET DIAGNOSTICS _rows = ROW_COUNT;
                    IF _rows OPERATOR(pg_catalog.<>) {{rows}} THEN
                {{chain_conflict}}
                    END IF;
                END IF;""")
                .with("archive", indent(archive(tombstone, false), "    "))
                .with("archive_on_conflict", indent(archive(tombstone, true), "    "))
                .with("rows", tombstone ? 2 : 1)
                .with("chain_conflict", indent(chainConflict(), "        "))
                .render();
    }

    /** The key's chain was started by a transaction this one could not see (REPEATABLE READ). */
    private String chainConflict() {
        return SqlTemplate.of("""
                RAISE EXCEPTION 'tidemark: a concurrent transaction started the same history chain of %.% for key %',
                      TG_TABLE_SCHEMA, TG_TABLE_NAME, {{key}}
                      USING ERRCODE = 'serialization_failure';""")
                .with("key", oldKeyText()).render();
    }

    /**
     * The snapshot missed a change of the key {@code keyText} (an expression of type text): a REPEATABLE READ writer
     * re-inserted a key another transaction deleted unseen, and archiving would overlap that transaction's history.
     */
    private static String staleSnapshot(String keyText) {
        return SqlTemplate.of("""
                RAISE EXCEPTION 'tidemark: a concurrent transaction changed the history of %.% for key % unseen by this snapshot',
                      TG_TABLE_SCHEMA, TG_TABLE_NAME, {{key}}
                      USING ERRCODE = 'serialization_failure';""")
                .with("key", keyText).render();
    }

    /** ON CONFLICT on the chain-start index: a version that would start a chain another transaction started. */
    private String onConflictChainStart() {
        return SqlTemplate.of("ON CONFLICT ({{key_list}}, chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING")
                .with("key_list", sql.keyList("")).render();
    }

    /**
     * The write function's insert into the closed versions: the superseded version, and with {@code tombstone} the
     * tombstone that ends its chain as a second row of the same statement; with {@code onConflict}, a version that
     * would start a chain another transaction started is left out (the caller counts the rows).
     */
    private String archive(boolean tombstone, boolean onConflict) {
        String oldValues = HistorySql.columnList(sql.shape.versioned(), c -> "OLD." + c.quoted());
        return SqlTemplate.of("""
                INSERT INTO {{closed}} ({{versioned}}, valid_from, valid_to, operation, chain_no, context)
                VALUES ({{old_values}}, _from, _to, _operation, _chain, OLD.{{context}}){{tombstone}}{{on_conflict}}""")
                .with("closed", closed)
                .with("versioned", HistorySql.columnList(sql.shape.versioned(), Column::quoted))
                .with("old_values", oldValues)
                .with("context", CONTEXT)
                .with("tombstone", tombstone ? ",\n       (" + oldValues + ", _to, _to, 3, _chain, _context)" : "")
                .with("on_conflict", onConflict ? "\n" + onConflictChainStart() : "")
                .render();
    }

    List<SqlStep> writeTriggers() {
        List<String> names = sql.names.statementTriggers();
        PgName function = sql.names.writeFunction();
        String updateWhen = wholeRowUpdateCondition() ? "NOT (OLD.* OPERATOR(pg_catalog.=) NEW.*)" : SqlTemplate.of("""
                NOT ({{unchanged}})
                          OR NEW.{{from}} IS NULL OR NEW.{{from}} OPERATOR(pg_catalog.<>) OLD.{{from}}
                          OR NOT COALESCE(NEW.{{context}} OPERATOR(pg_catalog.=) OLD.{{context}}, NEW.{{context}} IS NULL AND OLD.{{context}} IS NULL)""")
                .with("unchanged", sql.unchanged(sql.shape.comparable(), "NEW.", "OLD.", "                   AND "))
                .with("from", FROM).with("context", CONTEXT).render();
        return List.of(
                new SqlStep("INSERT: the column defaults date the version and record its context; the function only\n"
                        + "resets a start the client supplied and checks a supplied context.",
                        rowTrigger(names.get(0), "BEFORE INSERT", null, sql.names.insertFunction())),
                new SqlStep("UPDATE of a versioned column (or of the version's own columns): archive the superseded\n"
                        + "version and start the next. Updates of excluded columns only call nothing."
                        + (wholeRowUpdateCondition() ? "\nThe whole rows are compared (NULLs equal): the trigger then"
                        + " depends on no single column, so a column\ndropped with CASCADE does not drop it (writes fail"
                        + " until evolve() instead of going unarchived)." : ""),
                        rowTrigger(names.get(1), "BEFORE UPDATE", updateWhen, function)),
                deletesPerStatement()
                        ? new SqlStep("DELETE: archive every deleted row's version and write its tombstone, once per\n"
                        + "statement, from the rows it deleted (TriggerMode.STATEMENT). AFTER the rows are gone, so\n"
                        + "that a BEFORE DELETE trigger of the application that cancels a delete leaves no tombstone.",
                        HistorySql.trigger(names.get(2), SqlTemplate.of("AFTER DELETE ON {{table}} REFERENCING OLD TABLE AS"
                                + " {{deleted}}").with("table", table).with("deleted", DELETED_ROWS).render(),
                                "STATEMENT", function))
                        : new SqlStep("DELETE: archive the version and write its tombstone. AFTER the row is gone, so that a\n"
                        + "BEFORE DELETE trigger of the application that cancels the delete leaves no tombstone.",
                        rowTrigger(names.get(2), "AFTER DELETE", null, function)));
    }

    /** pg_trigger.tgtype bits: ROW, BEFORE, INSERT, DELETE, UPDATE, TRUNCATE. */
    private static final int ROW = 1, BEFORE = 2, INSERT = 4, DELETE = 8, UPDATE = 16, TRUNCATE = 32;

    /**
     * A trigger as install generates it: its pg_trigger.tgtype, its function, the table columns its WHEN reads
     * (sorted; null: no WHEN) and the name of its transition table of old rows (null: none).
     */
    record ExpectedTrigger(String name, int type, PgName function, List<String> whenColumns, String oldTable) {
    }

    /**
     * The four triggers, for the versioned columns {@code versioned} they were installed with (the registry's; a
     * generated column is not compared, so not read).
     */
    List<ExpectedTrigger> expectedTriggers(List<Column> versioned) {
        List<String> names = sql.names.statementTriggers();
        PgName write = sql.names.writeFunction();
        List<String> updateColumns = new ArrayList<>();
        versioned.stream().map(Column::name).filter(n -> !sql.shape.generated().contains(n)).forEach(updateColumns::add);
        updateColumns.add(CatalogReader.CURRENT_FROM_COLUMN);
        updateColumns.add(CatalogReader.CURRENT_CONTEXT_COLUMN);
        return List.of(
                new ExpectedTrigger(names.get(0), ROW | BEFORE | INSERT, sql.names.insertFunction(), null, null),
                new ExpectedTrigger(names.get(1), ROW | BEFORE | UPDATE, write, wholeRowUpdateCondition() ? List.of()
                        : updateColumns.stream().distinct().sorted().toList(), null),
                new ExpectedTrigger(names.get(2), deletesPerStatement() ? DELETE : ROW | DELETE, write, null,
                        deletesPerStatement() ? DELETED_ROWS : null),
                new ExpectedTrigger(sql.names.truncateTrigger(), BEFORE | TRUNCATE, sql.names.truncateFunction(), null,
                        null));
    }

    /** A tgtype in words, for a drift message: "BEFORE UPDATE FOR EACH ROW". */
    static String describeTriggerType(int type) {
        List<String> events = new ArrayList<>();
        if ((type & INSERT) != 0) {
            events.add("INSERT");
        }
        if ((type & UPDATE) != 0) {
            events.add("UPDATE");
        }
        if ((type & DELETE) != 0) {
            events.add("DELETE");
        }
        if ((type & TRUNCATE) != 0) {
            events.add("TRUNCATE");
        }
        String timing = (type & BEFORE) != 0 ? "BEFORE" : (type & 64) != 0 ? "INSTEAD OF" : "AFTER";
        return timing + " " + String.join(" OR ", events) + ((type & ROW) != 0 ? " FOR EACH ROW" : " FOR EACH STATEMENT");
    }

    /**
     * Whether the UPDATE trigger's condition compares whole rows ({@code OLD.* = NEW.*}, record equality: NULLs equal)
     * instead of each column: possible when every column is versioned (an excluded column would call the function
     * for nothing), none is generated (PostgreSQL refuses a whole-row NEW in a BEFORE trigger's WHEN then) and every
     * type has an equality (record equality has no text fallback). Then the trigger depends on the table, not on a
     * column, and a {@code DROP COLUMN ... CASCADE} leaves it in place: updates fail (the function reads the dropped
     * column) until evolve() instead of going unarchived.
     */
    boolean wholeRowUpdateCondition() {
        return sql.config.excludedColumns().isEmpty() && sql.shape.generated().isEmpty()
                && sql.shape.allColumns().stream().noneMatch(Column::noEquality);
    }

    /**
     * Why {@code triggers} (BEFORE ROW UPDATE triggers of the table that fire after Tidemark's) are refused: Tidemark
     * decides from NEW whether a version changed and stamps the next one; a trigger after it could change a
     * versioned column unseen (a set_updated_at on an update of an excluded column) and the change would be lost.
     */
    String laterUpdateTriggersProblem(List<String> triggers) {
        String ours = sql.names.statementTriggers().get(1);
        return "BEFORE ROW UPDATE trigger(s) " + String.join(", ", triggers) + " on " + sql.shape.table()
                + " fire after Tidemark's " + ours + " (PostgreSQL fires them in name order), so a versioned column"
                + " they change would not be archived. Rename them to sort before " + ours
                + ", or make them AFTER triggers";
    }

    private String rowTrigger(String name, String event, String when, PgName function) {
        return SqlTemplate.of("""
                CREATE OR REPLACE TRIGGER {{name}}
                    {{event}} ON {{table}}
                    FOR EACH ROW{{when}} EXECUTE FUNCTION {{function}}()""")
                .with("name", PgName.quote(name)).with("event", event).with("table", table)
                .with("when", when == null ? "" : "\n    WHEN (" + when + ")\n   ")
                .with("function", function.quoted()).render();
    }

    // --- TRUNCATE ------------------------------------------------------------------------------------------------

    String truncateBody() {
        if (sql.config.truncatePolicy() == TruncatePolicy.REFUSE) {
            return null; // the history table shape's refusal serves both
        }
        String versioned = HistorySql.columnList(sql.shape.versioned(), Column::quoted);
        return SqlTemplate.of("""

                DECLARE
                    _now     pg_catalog.timestamptz := pg_catalog.now();
                    _context pg_catalog.text[] := {{context_expression}};
                BEGIN
                {{table_guard}}    -- The archive reads the rows through this transaction's snapshot: outside READ COMMITTED it can
                    -- be older than the rows TRUNCATE removes (rows inserted or changed since would vanish unarchived).
                    IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>) 'read committed' THEN
                        RAISE EXCEPTION 'tidemark: TRUNCATE of %.% is only archived in READ COMMITTED; run it there or use DELETE',
                              TG_TABLE_SCHEMA, TG_TABLE_NAME
                              USING ERRCODE = 'serialization_failure';
                    END IF;
                    -- TRUNCATE fires no row trigger: before the rows go, archive each one's version and write its
                    -- tombstone, exactly as a DELETE of each row would have.
                    WITH archived AS (
                        INSERT INTO {{closed}} ({{versioned}}, valid_from, valid_to, operation, chain_no, context)
                        SELECT {{t_values}}, s.f, GREATEST(_now, s.f OPERATOR(pg_catalog.+) interval '1 microsecond'),
                               {{operation}}, {{chain}}, t.{{context}}
                          FROM {{table}} AS t
                          LEFT JOIN LATERAL (
                {{last_closed}}) AS l ON true
                         CROSS JOIN LATERAL (SELECT GREATEST(t.{{from}}, l.valid_to) AS f) AS s
                        RETURNING {{versioned}}, valid_to, chain_no
                    )
                    INSERT INTO {{closed}} ({{versioned}}, valid_from, valid_to, operation, chain_no, context)
                    SELECT {{a_values}}, a.valid_to, a.valid_to, 3, a.chain_no, _context
                      FROM archived AS a;
                    RETURN NULL;
                END;
                """)
                .with("context_expression", contextExpression().replace("\n        ", "\n                                  "))
                .with("table_guard", sql.tableGuard())
                .with("closed", closed)
                .with("versioned", versioned)
                .with("t_values", HistorySql.columnList(sql.shape.versioned(), c -> "t." + c.quoted()))
                .with("a_values", HistorySql.columnList(sql.shape.versioned(), c -> "a." + c.quoted()))
                .with("operation", OPERATION)
                .with("chain", CHAIN)
                .with("table", table)
                .with("from", FROM)
                .with("context", CONTEXT)
                .with("last_closed", indent(lastClosed("h", "t."), "                "))
                .render();
    }

    // --- point in time -------------------------------------------------------------------------------------------

    /**
     * The as-of query: closed versions whose period contains the instant, and the table's rows whose current
     * version had begun by then (no closed row of the key ends after it: the clamp, as an anti-join). The closed
     * versions are read through the view, whose other branch {@code history_id IS NOT NULL} prunes at plan time: the
     * function runs with the caller's rights, and a reader granted the view (and the table, whose rows are the
     * current versions) needs no grant on the closed-versions table.
     */
    String asOfQuery() {
        // Read before install adds them, the table's columns lack the two current-version columns: they come last.
        List<Column> columns = new ArrayList<>(sql.shape.allColumns());
        for (String name : List.of(CatalogReader.CURRENT_FROM_COLUMN, CatalogReader.CURRENT_CONTEXT_COLUMN)) {
            if (columns.stream().noneMatch(c -> c.name().equals(name))) {
                columns.add(new Column(name, "timestamp with time zone", null, false));
            }
        }
        String closedSelect = columns.stream()
                .map(c -> sql.shape.isVersioned(c.name()) ? "h." + c.quoted()
                        : c.name().equals(CatalogReader.CURRENT_FROM_COLUMN) ? "h.valid_from"
                        : c.name().equals(CatalogReader.CURRENT_CONTEXT_COLUMN) ? "ARRAY[h.changed_by, h.changed_by_name,"
                                + " h.correlation_id, h.reason, h.extra::pg_catalog.text]"
                        : SqlTemplate.of("NULL::{{type}}").with("type", c.type()).render())
                .collect(java.util.stream.Collectors.joining(", "));
        return SqlTemplate.of("""
                SELECT {{closed_select}}
                  FROM {{history}} AS h
                 WHERE h.history_id IS NOT NULL
                   AND tstzrange(h.valid_from, h.valid_to) @> at
                UNION ALL
                SELECT {{current_select}}
                  FROM {{table}} AS t
                 WHERE t.{{from}} <= at
                   AND NOT EXISTS (SELECT 1 FROM {{history}} AS h
                                    WHERE h.history_id IS NOT NULL AND {{key_match}} AND h.valid_to > at)""")
                .with("closed_select", closedSelect).with("history", sql.history).with("table", table).with("from", FROM)
                .with("current_select", HistorySql.columnList(columns, c -> "t." + c.quoted()))
                .with("key_match", sql.keyMatch("h.", "t.")).render();
    }

    private static String indent(String text, String indent) {
        return text.replaceAll("(?m)^(?=.)", indent);
    }
}
