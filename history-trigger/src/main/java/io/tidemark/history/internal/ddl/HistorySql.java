package io.tidemark.history.internal.ddl;

import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.history.internal.catalog.RegistryEntry;
import io.tidemark.history.internal.catalog.TableShape;
import io.tidemark.history.HistoryStorage;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.TriggerMode;
import io.tidemark.history.TruncatePolicy;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Generates every statement of a temporal table's installation from its configuration and its shape. Pure: no
 * database access, so the output is golden-file tested; all identifiers are quoted and all literals escaped here.
 *
 * <p>The row trigger keeps the reference semantics (INSERT opens a version at {@code now()}, a no-op UPDATE writes
 * nothing, UPDATE closes at {@code GREATEST(now(), valid_from + 1 µs)} and opens the next version exactly there,
 * DELETE closes and writes a tombstone with an empty period) and fixes what the reference gets wrong; each fix is
 * commented where it is generated.
 */
public final class HistorySql {

    /** Dollar-quote tag of generated bodies; verify() compares the bodies PostgreSQL stores between these. */
    static final String TAG = "$tidemark$";
    /** The as-of function's search_path; the trigger functions pin names by qualifying them instead. */
    static final String PINNED_SEARCH_PATH = "pg_catalog, pg_temp";
    /**
     * Equality from pg_catalog only, whatever the caller's search_path: the trigger functions carry no SET clause
     * (it is paid on every call), so every operator is named with its schema.
     */
    static final String EQ = "OPERATOR(pg_catalog.=)";
    public static final String REGISTRY = "\"tidemark\".\"temporal_tables\"";
    static final String CONTEXT_COLUMNS = "changed_by, changed_by_name, correlation_id, reason, extra";
    static final String CONTEXT_VALUES = "_changed_by, _changed_by_name, _correlation_id, _reason, _extra";

    final TemporalTable config;
    final TableShape shape;
    final HistoryNames names;
    final String history;
    final String table;

    public HistorySql(TemporalTable config, TableShape shape) {
        this.config = config;
        this.shape = shape;
        this.names = HistoryNames.of(config);
        this.history = names.historyTable().quoted();
        this.table = HistoryNames.table(config).quoted();
    }

    // --- the history table ---------------------------------------------------------------------------------------

    public SqlStep createHistoryTable() {
        StringBuilder versioned = new StringBuilder();
        for (Column c : shape.versioned()) {
            versioned.append("    ").append(c.quoted()).append(' ').append(c.typeDefinition()).append(",\n");
        }
        String optIn = (config.sessionUserColumn() ? "    " + sessionUserColumnDefinition() + ",\n" : "")
                + (config.transactionIdColumn() ? "    " + transactionIdColumnDefinition() + ",\n" : "");
        String sql = SqlTemplate.of("""
                CREATE TABLE {{history}} (
                    history_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                {{versioned}}    valid_from      timestamptz NOT NULL,
                    valid_to        timestamptz NOT NULL DEFAULT 'infinity',
                    operation       smallint    NOT NULL CHECK (operation IN (1, 2, 3)),
                    chain_no        integer     NOT NULL,
                    changed_by      text,
                    changed_by_name text,
                    correlation_id  text,
                    reason          text,
                    extra           jsonb,
                {{opt_in}}    CHECK (valid_from <= valid_to)
                )""")
                .with("history", history)
                .with("versioned", versioned.toString())
                .with("opt_in", optIn)
                .render();
        return new SqlStep("History of " + shape.table() + ": one row per version, plus a tombstone per delete.\n"
                + "Every versioned column keeps its exact type; all are nullable and no constraint of the table is\n"
                + "copied, so history can hold any past value. operation: 1 insert, 2 update, 3 delete.\n"
                + "chain_no: which life of the key a row belongs to (1 from the first insert, +1 after each delete).",
                sql);
    }

    static String sessionUserColumnDefinition() {
        return CatalogReader.SESSION_USER_COLUMN + " text DEFAULT session_user";
    }

    static String transactionIdColumnDefinition() {
        return CatalogReader.TRANSACTION_ID_COLUMN + " xid8 DEFAULT pg_catalog.pg_current_xact_id()";
    }

    /** {@code ALTER TABLE history ADD COLUMN}, for evolution. */
    public SqlStep addHistoryColumn(String definition) {
        return new SqlStep("A column new to the table (or an opt-in column) joins history; older versions have NULL.",
                SqlTemplate.of("ALTER TABLE {{history}} ADD COLUMN {{definition}}")
                        .with("history", history).with("definition", definition).render());
    }

    /** The {@link HistoryStorage#CURRENT_IN_TABLE} generator, or null for the history table shape. */
    CurrentInTableSql current() {
        return config.storage() == HistoryStorage.CURRENT_IN_TABLE ? new CurrentInTableSql(this) : null;
    }

    public List<SqlStep> createIndexes() {
        if (current() != null) {
            return current().createIndexes();
        }
        List<SqlStep> steps = new ArrayList<>();
        steps.add(keyIndex());
        steps.add(openVersionIndex());
        steps.add(chainStartIndex());
        if (config.periodIndex()) {
            steps.add(periodIndex());
        }
        return steps;
    }

    SqlStep keyIndex() {
        return index("Versions of one key, newest first: the trigger's lookups and as-of queries for one key.\n"
                + "valid_to DESC breaks the tie between a tombstone and a re-insert that starts at the same instant.",
                false, names.keyIndex(), SqlTemplate.of("({{keys}}, valid_from DESC, valid_to DESC)").with("keys", keyList("")).render());
    }

    SqlStep openVersionIndex() {
        return index("At most one open version per key, enforced by the database itself.",
                true, names.openIndex(), SqlTemplate.of("({{keys}}) WHERE valid_to = 'infinity'").with("keys", keyList("")).render());
    }

    SqlStep chainStartIndex() {
        return index("One start per life of a key: two transactions that cannot see each other's history (REPEATABLE\n"
                + "READ) cannot both start the same chain; the later one fails with a serialization error instead.",
                true, names.chainIndex(), SqlTemplate.of("({{keys}}, chain_no) WHERE operation = 1").with("keys", keyList("")).render());
    }

    SqlStep periodIndex() {
        return index("Periods as ranges, for whole-table as-of snapshots and window queries.",
                false, names.periodIndex(), "USING gist (tstzrange(valid_from, valid_to))");
    }

    SqlStep index(String comment, boolean unique, String name, String definition) {
        return new SqlStep(comment, SqlTemplate.of("CREATE {{unique}}INDEX IF NOT EXISTS {{name}} ON {{history}} {{definition}}")
                .with("unique", unique ? "UNIQUE " : "")
                .with("name", PgName.quote(name))
                .with("history", history)
                .with("definition", definition)
                .render());
    }

    // --- the row trigger -----------------------------------------------------------------------------------------

    /** The body of {@code <history>_write()}, exactly as PostgreSQL stores it in {@code prosrc}. */
    public String writeFunctionBody() {
        if (current() != null) {
            return current().writeBody();
        }
        return config.triggerMode() == TriggerMode.ROW ? rowFunctionBody() : new StatementTriggerSql(this).body();
    }

    private String rowFunctionBody() {
        String versionColumns = columnList(shape.versioned(), c -> c.quoted());
        return SqlTemplate.of("""

                {{context_declarations}}    _last_to         pg_catalog.timestamptz;
                BEGIN
                {{table_guard}}
                    -- Each event is one statement on history (a statement is most of a one-row trigger's cost).
                    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN
                        IF {{same_key}} THEN
                            -- No versioned column changed: write nothing. Columns without an equality operator
                            -- (json, xml, point, ...) are compared as text, so they never break the update.
                            -- Each column: equal, or both NULL (IS NOT DISTINCT FROM, which cannot be qualified).
                            IF {{unchanged}} THEN
                                RETURN NULL;
                            END IF;
                            -- Close the open version no earlier than 1 microsecond after it began (a transaction
                            -- that started before the one that wrote it has an older now()), and open the next
                            -- version exactly there, so the chain stays contiguous.
                {{next_version}}            RETURN NULL;
                        END IF;
                        -- The primary key changed: the old key's chain ends with a tombstone and the new key's
                        -- chain starts with an insert, as if the row had been deleted and inserted.
                    END IF;

                    IF TG_OP OPERATOR(pg_catalog.<>) 'INSERT' THEN
                        -- DELETE (or the old key of a key update): close the open version and write a tombstone
                        -- with the last values and an empty period at the closing instant.
                {{tombstone}}        IF TG_OP OPERATOR(pg_catalog.=) 'DELETE' THEN
                            RETURN NULL;
                        END IF;
                    END IF;

                    -- INSERT (or the new key of a key update): start no earlier than the end of the key's last
                    -- version, so a delete and re-insert (in this transaction, or by a transaction that began
                    -- earlier but writes later) never overlaps the versions before it. FOR UPDATE makes a
                    -- REPEATABLE READ writer that cannot see the latest version fail with a serialization error.
                    -- Nothing is written when the last version is still open.
                    INSERT INTO {{history}} ({{insert_columns}})
                    SELECT {{new_values}}, GREATEST(_now, l.valid_to), 'infinity', 1, COALESCE(l.chain_no, 0) OPERATOR(pg_catalog.+) 1, {{context_values}}
                      FROM (VALUES (1)) AS one (x)
                      LEFT JOIN LATERAL (
                            SELECT h.valid_to, h.chain_no
                              FROM {{history}} AS h
                             WHERE {{new_key_match}}
                             ORDER BY h.valid_from DESC, h.valid_to DESC
                             LIMIT 1
                               FOR UPDATE) AS l ON true
                     WHERE COALESCE(l.valid_to OPERATOR(pg_catalog.<>) 'infinity', true)
                    ON CONFLICT ({{key_list}}, chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING;
                    IF NOT FOUND THEN
                        -- Rare: find out which of the two refusals it was.
                        SELECT h.valid_to INTO _last_to
                          FROM {{history}} AS h
                         WHERE {{new_key_match}}
                         ORDER BY h.valid_from DESC, h.valid_to DESC
                         LIMIT 1;
                        IF _last_to OPERATOR(pg_catalog.=) 'infinity' THEN
                            RAISE EXCEPTION 'tidemark: history of %.% already has an open version for key %',
                                  TG_TABLE_SCHEMA, TG_TABLE_NAME, {{new_key}}::pg_catalog.text
                                  USING ERRCODE = 'unique_violation',
                                        HINT = 'History is out of step with the table (was the trigger disabled?); run TemporalTable.checkInvariants().';
                        END IF;
                        -- REPEATABLE READ raises this itself; READ COMMITTED gets here only if the other transaction
                        -- committed while this one waited. Either way: retry the transaction.
                        RAISE EXCEPTION 'tidemark: a concurrent transaction started the same history chain of %.% for key %',
                              TG_TABLE_SCHEMA, TG_TABLE_NAME, {{new_key}}::pg_catalog.text
                              USING ERRCODE = 'serialization_failure';
                    END IF;
                    RETURN NULL;
                END;
                """)
                .with("context_declarations", contextDeclarations())
                .with("table_guard", tableGuard())
                .with("same_key", keyMatch("NEW.", "OLD."))
                .with("unchanged", unchanged("NEW.", "OLD.", "               AND "))
                .with("next_version", closeAndWrite("NEW.", "'infinity'", 2, "            "))
                .with("tombstone", closeAndWrite("OLD.", null, 3, "        "))
                .with("new_key", row(shape.keyColumns(), "NEW."))
                .with("history", history)
                .with("insert_columns", versionColumns + ", valid_from, valid_to, operation, chain_no, "
                        + CONTEXT_COLUMNS)
                .with("new_values", columnList(shape.versioned(), c -> "NEW." + c.quoted()))
                .with("context_values", CONTEXT_VALUES)
                .with("new_key_match", keyMatch("h.", "NEW."))
                .with("key_list", keyList(""))
                .render();
    }

    /**
     * One statement: closes OLD's open version and writes the row that follows it, from {@code values} (NEW or
     * OLD), starting where the closed one ended; {@code validTo} is its end, or null for the closing instant (an
     * empty period: a tombstone).
     */
    private String closeAndWrite(String values, String validTo, int operation, String indent) {
        String body = SqlTemplate.of("""
                WITH closed AS (
                    UPDATE {{history}} AS h
                       SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                     WHERE {{old_key_match}} AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                    RETURNING h.valid_to, h.chain_no
                )
                INSERT INTO {{history}} ({{insert_columns}})
                SELECT {{values}}, COALESCE(c.valid_to, _now), {{valid_to}}, {{operation}}, COALESCE(c.chain_no, 1), {{context_values}}
                  FROM (VALUES (1)) AS one (x) LEFT JOIN closed AS c ON true;
                """)
                .with("history", history)
                .with("old_key_match", keyMatch("h.", "OLD."))
                .with("insert_columns", columnList(shape.versioned(), Column::quoted)
                        + ", valid_from, valid_to, operation, chain_no, " + CONTEXT_COLUMNS)
                .with("values", columnList(shape.versioned(), c -> values + c.quoted()))
                .with("valid_to", validTo == null ? "COALESCE(c.valid_to, _now)" : validTo)
                .with("operation", operation)
                .with("context_values", CONTEXT_VALUES)
                .render();
        return body.replaceAll("(?m)^(?=.)", indent);
    }

    public SqlStep writeFunction() {
        return function(names.writeFunction(), writeFunctionBody(),
                "The " + (config.triggerMode() == TriggerMode.ROW ? "row" : current() != null ? "row and DELETE statement"
                        : "statement") + " triggers' function."
                        + " SECURITY DEFINER: it writes history as its owner, so the application\n"
                        + "role needs no privilege on the history table and cannot forge or rewrite it. Every relation,\n"
                        + "type, function and operator is named with its schema, so the caller's search_path (which this\n"
                        + "function does not SET: the clause is paid on every call) cannot substitute an object of its\n"
                        + "own; PostgreSQL never looks up functions or operators in pg_temp.");
    }

    public SqlStep revokeWriteFunction() {
        return new SqlStep("Nobody else may attach this SECURITY DEFINER function to a table of their own.",
                revokeFromPublic(names.writeFunction().quoted()));
    }

    /** The triggers that call the write function: one row trigger, or three statement triggers. */
    public List<SqlStep> writeTriggers() {
        if (current() != null) {
            return current().writeTriggers();
        }
        if (config.triggerMode() == TriggerMode.ROW) {
            return List.of(new SqlStep("Every row change of the table, whoever makes it, is recorded in the same statement.",
                    trigger(names.rowTrigger(), SqlTemplate.of("AFTER INSERT OR UPDATE OR DELETE ON {{table}}")
                                    .with("table", table).render(), "ROW",
                            names.writeFunction())));
        }
        List<String> triggers = names.statementTriggers();
        return List.of(statementTrigger(triggers.get(0), "INSERT", "NEW TABLE AS new_rows",
                        "Every statement's changes are recorded set-based, in the same statement, from its transition tables."),
                statementTrigger(triggers.get(1), "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows",
                        "Updates: old and new rows are paired by primary key."),
                statementTrigger(triggers.get(2), "DELETE", "OLD TABLE AS old_rows", "Deletes."));
    }

    private SqlStep statementTrigger(String name, String event, String referencing, String comment) {
        return new SqlStep(comment, trigger(name, SqlTemplate.of("AFTER {{event}} ON {{table}} REFERENCING {{referencing}}")
                        .with("event", event).with("table", table).with("referencing", referencing).render(),
                "STATEMENT", names.writeFunction()));
    }

    /** {@code CREATE OR REPLACE TRIGGER}: {@code when} is the timing, event and table, {@code each} ROW or STATEMENT. */
    static String trigger(String name, String when, String each, PgName function) {
        return SqlTemplate.of("""
                CREATE OR REPLACE TRIGGER {{name}}
                    {{when}}
                    FOR EACH {{each}} EXECUTE FUNCTION {{function}}()""")
                .with("name", PgName.quote(name))
                .with("when", when)
                .with("each", each)
                .with("function", function.quoted())
                .render();
    }

    /** The triggers of the other mode, dropped when evolve switches modes. */
    public List<SqlStep> dropOtherModeTriggers() {
        if (current() != null) {
            return List.of(); // one set of triggers whatever the mode
        }
        TriggerMode other = config.triggerMode() == TriggerMode.ROW ? TriggerMode.STATEMENT : TriggerMode.ROW;
        return names.writeTriggers(other).stream().map(t -> new SqlStep("Switching trigger mode.",
                SqlTemplate.of("DROP TRIGGER IF EXISTS {{trigger}} ON {{table}}")
                        .with("trigger", PgName.quote(t)).with("table", table).render())).toList();
    }

    // --- TRUNCATE ------------------------------------------------------------------------------------------------

    public String truncateFunctionBody() {
        if (current() != null && current().truncateBody() != null) {
            return current().truncateBody();
        }
        if (config.truncatePolicy() == TruncatePolicy.REFUSE) {
            return SqlTemplate.of("""

                    BEGIN
                    {{table_guard}}    RAISE EXCEPTION 'tidemark: TRUNCATE of %.% is refused because its history would lose track of the rows', TG_TABLE_SCHEMA, TG_TABLE_NAME
                              USING ERRCODE = 'feature_not_supported',
                                    HINT = 'DELETE the rows instead (history records each one), or configure TruncatePolicy.CLOSE_VERSIONS.';
                    END;
                    """).with("table_guard", tableGuard()).render();
        }
        return SqlTemplate.of("""

                {{context_declarations}}BEGIN
                {{table_guard}}    -- TRUNCATE deletes every row without firing row triggers: close every open version and
                    -- write its tombstone, exactly as a DELETE of each row would have.
                    WITH closed AS (
                        UPDATE {{history}} AS h
                           SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                         WHERE h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                        RETURNING {{returned}}, h.valid_to, h.chain_no
                    )
                    INSERT INTO {{history}} ({{columns}}, valid_from, valid_to, operation, chain_no, {{context_columns}})
                    SELECT {{closed_values}}, c.valid_to, c.valid_to, 3, c.chain_no, {{context_values}}
                      FROM closed AS c;
                    RETURN NULL;
                END;
                """)
                .with("context_declarations", contextDeclarations())
                .with("table_guard", tableGuard())
                .with("history", history)
                .with("returned", columnList(shape.versioned(), c -> "h." + c.quoted()))
                .with("columns", columnList(shape.versioned(), Column::quoted))
                .with("context_columns", CONTEXT_COLUMNS)
                .with("closed_values", columnList(shape.versioned(), c -> "c." + c.quoted()))
                .with("context_values", CONTEXT_VALUES)
                .render();
    }

    public SqlStep truncateFunction() {
        return function(names.truncateFunction(), truncateFunctionBody(),
                config.truncatePolicy() == TruncatePolicy.REFUSE
                        ? "TRUNCATE fires no row trigger; this configuration refuses it."
                        : "TRUNCATE fires no row trigger; this closes every open version instead of leaving them open.");
    }

    public SqlStep revokeTruncateFunction() {
        return new SqlStep("Nobody else may attach this SECURITY DEFINER function to a table of their own.",
                revokeFromPublic(names.truncateFunction().quoted()));
    }

    static String revokeFromPublic(String function) {
        return SqlTemplate.of("REVOKE ALL ON FUNCTION {{function}}() FROM PUBLIC").with("function", function).render();
    }

    public SqlStep truncateTrigger() {
        // With the current version in the table, TRUNCATE archives the rows before they go.
        String timing = config.truncatePolicy() == TruncatePolicy.REFUSE || current() != null ? "BEFORE" : "AFTER";
        return new SqlStep("TRUNCATE policy: " + config.truncatePolicy() + ".",
                trigger(names.truncateTrigger(), SqlTemplate.of("{{timing}} TRUNCATE ON {{table}}")
                                .with("timing", timing).with("table", table).render(), "STATEMENT",
                        names.truncateFunction()));
    }

    // --- point-in-time -------------------------------------------------------------------------------------------

    public String asOfFunctionBody() {
        String select = shape.allColumns().stream()
                .map(c -> shape.isVersioned(c.name()) ? "h." + c.quoted()
                        : SqlTemplate.of("NULL::{{type}} AS {{column}}")
                                .with("type", c.type()).with("column", c.quoted()).render())
                .collect(Collectors.joining(", "));
        return SqlTemplate.of("""

                DECLARE
                    _horizon timestamptz;
                BEGIN
                    -- Before the retention horizon, versions may have been pruned: refuse rather than answer wrong.
                    SELECT r.pruned_before INTO _horizon
                      FROM {{registry}} AS r
                     WHERE r.source_schema = {{schema}} AND r.source_table = {{table}};
                    IF at < _horizon THEN
                        RAISE EXCEPTION 'tidemark: history of {{table_in_format}} before % was pruned; ask for an instant at or after it', _horizon
                              USING ERRCODE = 'data_exception';
                    END IF;
                    RETURN QUERY
                {{query}};
                END;
                """)
                .with("registry", REGISTRY)
                .with("schema", PgName.literal(shape.table().schema().orElseThrow()))
                .with("table", PgName.literal(shape.table().name()))
                .with("table_in_format", escapeFormat(shape.table().toString()))
                .with("query", (current() != null ? current().asOfQuery() : SqlTemplate.of("""
                            SELECT {{select}}
                              FROM {{history}} AS h
                             WHERE tstzrange(h.valid_from, h.valid_to) @> at""")
                        .with("select", select).with("history", history).render()).replaceAll("(?m)^(?=.)", "    "))
                .render();
    }

    public SqlStep asOfFunction() {
        PgName fn = names.asOfFunction();
        String sql = SqlTemplate.of("""
                CREATE OR REPLACE FUNCTION {{function}}(at timestamptz)
                    RETURNS SETOF {{table}}
                    LANGUAGE plpgsql
                    STABLE
                    SET search_path = {{search_path}}
                AS {{tag}}{{body}}{{tag}}""")
                .with("function", fn.quoted())
                .with("table", table)
                .with("search_path", PINNED_SEARCH_PATH)
                .with("tag", TAG)
                .with("body", asOfFunctionBody())
                .render();
        return new SqlStep("The table as it was at an instant, as its own row type, so point-in-time joins are plain\n"
                + "SQL: SELECT * FROM " + fn + "('2024-01-01') AS p JOIN ... Runs with the caller's rights.", sql);
    }

    // --- seeding and registry ------------------------------------------------------------------------------------

    public SqlStep lockTable() {
        return new SqlStep("Keep writers out until the trigger is in place, so no change slips between the seed and\n"
                + "the trigger. Readers are not blocked.",
                SqlTemplate.of("LOCK TABLE {{table}} IN SHARE ROW EXCLUSIVE MODE").with("table", table).render());
    }

    public SqlStep seed() {
        String from = config.seedValidFromColumn()
                .map(col -> "COALESCE(t." + PgName.quote(col) + "::timestamptz, pg_catalog.now())")
                .orElse("pg_catalog.now()");
        return new SqlStep("Every existing row becomes an open version (operation 1), dated "
                + config.seedValidFromColumn().map(c -> "from column " + c).orElse("at install time") + ".",
                SqlTemplate.of("""
                        INSERT INTO {{history}} ({{columns}}, valid_from, valid_to, operation, chain_no)
                        SELECT {{values}}, {{from}}, 'infinity', 1, 1
                          FROM {{table}} AS t""")
                        .with("history", history)
                        .with("columns", columnList(shape.versioned(), Column::quoted))
                        .with("values", columnList(shape.versioned(), c -> "t." + c.quoted()))
                        .with("from", from)
                        .with("table", table)
                        .render());
    }

    /**
     * One batch of {@link #seed()} in primary-key order, for an install that reports progress: the next
     * {@code rows} rows after the last key of the previous batch (bound as text, one parameter per key column, cast
     * to the column's type), or from the start when {@code first}. Answers one row: the batch's size and its last
     * key as text; no row when the batch was empty.
     */
    public String seedBatch(boolean first, int rows) {
        String from = config.seedValidFromColumn()
                .map(col -> "COALESCE(t." + PgName.quote(col) + "::timestamptz, pg_catalog.now())")
                .orElse("pg_catalog.now()");
        String after = first ? "" : "\n     WHERE " + row(shape.keyColumns(), "t.") + " > ("
                + shape.keyColumns().stream()
                .map(c -> "CAST(? AS " + c.type() + ")" + (c.collation() == null ? "" : " COLLATE " + c.collation()))
                .collect(Collectors.joining(", ")) + ")";
        return SqlTemplate.of("""
                WITH batch AS MATERIALIZED (
                    SELECT t.* FROM {{table}} AS t{{after}}
                     ORDER BY {{keys}}
                     LIMIT {{rows}}
                ), written AS (
                    INSERT INTO {{history}} ({{columns}}, valid_from, valid_to, operation, chain_no)
                    SELECT {{values}}, {{from}}, 'infinity', 1, 1
                      FROM batch AS t
                )
                SELECT pg_catalog.count(*) OVER (), {{key_texts}}
                  FROM batch AS t
                 ORDER BY {{keys_descending}}
                 LIMIT 1""")
                .with("table", table)
                .with("after", after)
                .with("keys", keyList("t."))
                .with("rows", Integer.toString(rows))
                .with("history", history)
                .with("columns", columnList(shape.versioned(), Column::quoted))
                .with("values", columnList(shape.versioned(), c -> "t." + c.quoted()))
                .with("from", from)
                .with("key_texts", columnList(shape.keyColumns(), c -> "t." + c.quoted() + "::text"))
                .with("keys_descending", columnList(shape.keyColumns(), c -> "t." + c.quoted() + " DESC"))
                .render();
    }

    /** The number of rows the seed writes, counted under the install's lock. */
    public String countRows() {
        return SqlTemplate.of("SELECT pg_catalog.count(*) FROM {{table}}").with("table", table).render();
    }

    public static List<SqlStep> createRegistry() {
        // IF NOT EXISTS would still ask for CREATE on the database (schema) and on the schema (table) before
        // looking: an installer that only has the documented registry grants could not run the script.
        return List.of(new SqlStep("Tidemark's registry of temporal tables: one row per temporal table, with its options,\n"
                + "versioned columns, the hash of its generated function (verify() reports drift against it) and the\n"
                + "retention horizon. Created by the first installation (CREATE on the database, once); later ones\n"
                + "need only USAGE on the schema and SELECT, INSERT, UPDATE, DELETE on the table.",
                SqlTemplate.of("""
                        DO $tidemark$
                        BEGIN
                            IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'tidemark') THEN
                                CREATE SCHEMA "tidemark";
                            END IF;
                            IF pg_catalog.to_regclass('"tidemark"."temporal_tables"') IS NULL THEN
                                CREATE TABLE {{registry}} (
                                    source_schema     text        NOT NULL,
                                    source_table      text        NOT NULL,
                                    history_schema    text        NOT NULL,
                                    history_table     text        NOT NULL,
                                    key_columns       jsonb       NOT NULL,
                                    versioned_columns jsonb       NOT NULL,
                                    orphan_columns    jsonb       NOT NULL DEFAULT '[]',
                                    options           jsonb       NOT NULL,
                                    function_hash     text        NOT NULL,
                                    installed_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
                                    evolved_at        timestamptz,
                                    pruned_before     timestamptz,
                                    PRIMARY KEY (source_schema, source_table),
                                    UNIQUE (history_schema, history_table)
                                );
                            END IF;
                        END
                        $tidemark$""").with("registry", REGISTRY).render()));
    }

    /** Inserts or refreshes this table's registry row. Literals come from the catalog and the configuration. */
    public SqlStep register(RegistryEntry entry) {
        return new SqlStep("Register the table, its versioned columns and the hash of its generated function.",
                SqlTemplate.of("""
                        INSERT INTO {{registry}} (source_schema, source_table, history_schema, history_table,
                                key_columns, versioned_columns, orphan_columns, options, function_hash)
                        VALUES ({{source_schema}}, {{source_table}}, {{history_schema}}, {{history_table}},
                                {{key_columns}},
                                {{versioned_columns}},
                                {{orphan_columns}},
                                {{options}},
                                {{function_hash}})
                        ON CONFLICT (source_schema, source_table) DO UPDATE
                           SET key_columns = EXCLUDED.key_columns, versioned_columns = EXCLUDED.versioned_columns,
                               orphan_columns = EXCLUDED.orphan_columns, options = EXCLUDED.options,
                               function_hash = EXCLUDED.function_hash, evolved_at = pg_catalog.now()""")
                        .with("registry", REGISTRY)
                        .with("source_schema", PgName.literal(entry.table().schema().orElseThrow()))
                        .with("source_table", PgName.literal(entry.table().name()))
                        .with("history_schema", PgName.literal(entry.historyTable().schema().orElseThrow()))
                        .with("history_table", PgName.literal(entry.historyTable().name()))
                        .with("key_columns", PgName.literal(entry.keyColumnsJson()))
                        .with("versioned_columns", PgName.literal(entry.versionedColumnsJson()))
                        .with("orphan_columns", PgName.literal(entry.orphanColumnsJson()))
                        .with("options", PgName.literal(entry.optionsJson()))
                        .with("function_hash", PgName.literal(entry.functionHash()))
                        .render());
    }

    // --- helpers -------------------------------------------------------------------------------------------------

    SqlStep function(PgName name, String body, String comment) {
        return function(name, body, comment, true);
    }

    /** A trigger function; {@code definer}: SECURITY DEFINER, else it runs with the rights of the writing role. */
    SqlStep function(PgName name, String body, String comment, boolean definer) {
        return new SqlStep(comment, SqlTemplate.of("""
                CREATE OR REPLACE FUNCTION {{function}}()
                    RETURNS trigger
                    LANGUAGE plpgsql{{security}}
                AS {{tag}}{{body}}{{tag}}""")
                .with("function", name.quoted())
                .with("security", definer ? "\n    SECURITY DEFINER" : "")
                .with("tag", TAG)
                .with("body", body)
                .render());
    }

    String contextDeclarations() {
        String p = config.settingsPrefix();
        return SqlTemplate.of("""
                DECLARE
                    -- Change context: transaction-local settings pushed by the application; '' means absent.
                    -- (NULLIF would resolve its = through the caller's search_path, so the test is spelled out.)
                    _now             pg_catalog.timestamptz := pg_catalog.now();
                    _changed_by      pg_catalog.text  := {{changed_by}};
                    _changed_by_name pg_catalog.text  := {{changed_by_name}};
                    _correlation_id  pg_catalog.text  := {{correlation_id}};
                    _reason          pg_catalog.text  := {{reason}};
                    _extra           pg_catalog.jsonb := ({{extra}})::pg_catalog.jsonb;
                """)
                .with("changed_by", setting(p + ".changed_by"))
                .with("changed_by_name", setting(p + ".changed_by_name"))
                .with("correlation_id", setting(p + ".correlation_id"))
                .with("reason", setting(p + ".reason"))
                .with("extra", setting(p + ".extra"))
                .render();
    }

    /** A transaction-local setting, NULL when absent or empty. */
    static String setting(String name) {
        return SqlTemplate.of("CASE WHEN pg_catalog.current_setting({{name}}, true) OPERATOR(pg_catalog.<>) ''"
                        + " THEN pg_catalog.current_setting({{name}}, true) END")
                .with("name", PgName.literal(name)).render();
    }

    /** Refuses to run for another table: defence in depth on top of the REVOKE. */
    String tableGuard() {
        return SqlTemplate.of("""
                    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) {{schema}} OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) {{table}} THEN
                        RAISE EXCEPTION 'tidemark: % was generated for {{table_in_format}}, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
                              USING ERRCODE = 'insufficient_privilege';
                    END IF;
                """)
                .with("schema", PgName.literal(shape.table().schema().orElseThrow()))
                .with("table", PgName.literal(shape.table().name()))
                .with("table_in_format", escapeFormat(shape.table().toString()))
                .render();
    }

    String keyMatch(String left, String right) {
        return shape.keyColumns().stream().map(c -> left + c.quoted() + " " + EQ + " " + right + c.quoted())
                .collect(Collectors.joining(" AND "));
    }

    /**
     * True when no versioned column differs between the two rows, NULL equal to NULL, and never NULL itself: the
     * meaning of a row-wise {@code IS NOT DISTINCT FROM}, which resolves its {@code =} through the caller's
     * search_path and has no qualified form. Columns without an equality operator are compared as text.
     */
    String unchanged(String left, String right, String separator) {
        return unchanged(shape.versioned(), left, right, separator);
    }

    /** The no-op test over {@code columns}: every one equal in {@code left} and {@code right}, NULLs equal. */
    String unchanged(List<Column> columns, String left, String right, String separator) {
        return columns.stream().map(c -> {
            String cast = c.noEquality() ? "::pg_catalog.text" : "";
            String l = left + c.quoted() + cast;
            String r = right + c.quoted() + cast;
            return SqlTemplate.of("COALESCE({{l}} {{eq}} {{r}}, {{l}} IS NULL AND {{r}} IS NULL)")
                    .with("l", l).with("eq", EQ).with("r", r).render();
        }).collect(Collectors.joining("\n" + separator));
    }

    String keyList(String prefix) {
        return columnList(shape.keyColumns(), c -> prefix + c.quoted());
    }

    static String row(List<Column> columns, String prefix) {
        return "(" + columns.stream().map(c -> prefix + c.quoted()).collect(Collectors.joining(", ")) + ")";
    }

    static String columnList(List<Column> columns, Function<Column, String> render) {
        return columns.stream().map(render).collect(Collectors.joining(", "));
    }

    /** A name inside a RAISE format string and a SQL literal: quote doubled, % doubled. */
    static String escapeFormat(String text) {
        return text.replace("'", "''").replace("%", "%%");
    }
}
