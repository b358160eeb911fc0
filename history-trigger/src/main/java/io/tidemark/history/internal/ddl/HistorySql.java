package io.tidemark.history.internal.ddl;

import io.tidemark.history.internal.catalog.CatalogReader;
import io.tidemark.history.internal.catalog.Column;
import io.tidemark.history.internal.catalog.RegistryEntry;
import io.tidemark.history.internal.catalog.TableShape;
import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.TriggerMode;
import io.tidemark.history.TruncatePolicy;
import io.tidemark.sync.internal.sql.PgName;

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
    static final String PINNED_SEARCH_PATH = "pg_catalog, pg_temp";
    public static final String REGISTRY = "\"tidemark\".\"temporal_tables\"";
    static final String CONTEXT_COLUMNS = "changed_by, changed_by_name, correlation_id, reason, extra";
    static final String CONTEXT_VALUES = "_changed_by, _changed_by_name, _correlation_id, _reason, _extra";

    private final TemporalTable config;
    final TableShape shape;
    private final HistoryNames names;
    final String history;
    private final String table;

    public HistorySql(TemporalTable config, TableShape shape) {
        this.config = config;
        this.shape = shape;
        this.names = HistoryNames.of(config);
        this.history = names.historyTable().quoted();
        this.table = HistoryNames.table(config).quoted();
    }

    // --- the history table ---------------------------------------------------------------------------------------

    public SqlStep createHistoryTable() {
        StringBuilder sql = new StringBuilder("CREATE TABLE ").append(history).append(" (\n");
        sql.append("    history_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n");
        for (Column c : shape.versioned()) {
            sql.append("    ").append(c.quoted()).append(' ').append(c.typeDefinition()).append(",\n");
        }
        sql.append("    valid_from      timestamptz NOT NULL,\n")
                .append("    valid_to        timestamptz NOT NULL DEFAULT 'infinity',\n")
                .append("    operation       smallint    NOT NULL CHECK (operation IN (1, 2, 3)),\n")
                .append("    chain_no        integer     NOT NULL,\n")
                .append("    changed_by      text,\n")
                .append("    changed_by_name text,\n")
                .append("    correlation_id  text,\n")
                .append("    reason          text,\n")
                .append("    extra           jsonb,\n");
        if (config.sessionUserColumn()) {
            sql.append("    ").append(sessionUserColumnDefinition()).append(",\n");
        }
        if (config.transactionIdColumn()) {
            sql.append("    ").append(transactionIdColumnDefinition()).append(",\n");
        }
        sql.append("    CHECK (valid_from <= valid_to)\n)");
        return new SqlStep("History of " + shape.table() + ": one row per version, plus a tombstone per delete.\n"
                + "Every versioned column keeps its exact type; all are nullable and no constraint of the table is\n"
                + "copied, so history can hold any past value. operation: 1 insert, 2 update, 3 delete.\n"
                + "chain_no: which life of the key a row belongs to (1 from the first insert, +1 after each delete).",
                sql.toString());
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
                "ALTER TABLE " + history + " ADD COLUMN " + definition);
    }

    public List<SqlStep> createIndexes() {
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
                false, names.keyIndex(), "(" + keyList("") + ", valid_from DESC, valid_to DESC)");
    }

    SqlStep openVersionIndex() {
        return index("At most one open version per key, enforced by the database itself.",
                true, names.openIndex(), "(" + keyList("") + ") WHERE valid_to = 'infinity'");
    }

    SqlStep chainStartIndex() {
        return index("One start per life of a key: two transactions that cannot see each other's history (REPEATABLE\n"
                + "READ) cannot both start the same chain; the later one fails with a serialization error instead.",
                true, names.chainIndex(), "(" + keyList("") + ", chain_no) WHERE operation = 1");
    }

    SqlStep periodIndex() {
        return index("Periods as ranges, for whole-table as-of snapshots and window queries.",
                false, names.periodIndex(), "USING gist (tstzrange(valid_from, valid_to))");
    }

    private SqlStep index(String comment, boolean unique, String name, String definition) {
        return new SqlStep(comment, "CREATE " + (unique ? "UNIQUE " : "") + "INDEX IF NOT EXISTS " + PgName.quote(name)
                + " ON " + history + " " + definition);
    }

    // --- the row trigger -----------------------------------------------------------------------------------------

    /** The body of {@code <history>_write()}, exactly as PostgreSQL stores it in {@code prosrc}. */
    public String writeFunctionBody() {
        return config.triggerMode() == TriggerMode.ROW ? rowFunctionBody() : new StatementTriggerSql(this).body();
    }

    private String rowFunctionBody() {
        String key = keyMatch("h.", "OLD.");
        String versionColumns = columnList(shape.versioned(), c -> c.quoted());
        String insertColumns = versionColumns + ", valid_from, valid_to, operation, chain_no, " + CONTEXT_COLUMNS;
        return "\n"
                + contextDeclarations()
                + "    _closed_at       timestamptz;\n"
                + "    _chain           integer;\n"
                + "    _last_to         timestamptz;\n"
                + "BEGIN\n"
                + tableGuard()
                + "\n"
                + "    IF TG_OP = 'UPDATE' THEN\n"
                + "        IF " + row(shape.keyColumns(), "NEW.", false) + " IS NOT DISTINCT FROM "
                + row(shape.keyColumns(), "OLD.", false) + " THEN\n"
                + "            -- No versioned column changed: write nothing. Columns without an equality operator\n"
                + "            -- (json, xml, point, ...) are compared as text, so they never break the update.\n"
                + "            IF " + row(shape.versioned(), "NEW.", true) + "\n"
                + "               IS NOT DISTINCT FROM " + row(shape.versioned(), "OLD.", true) + " THEN\n"
                + "                RETURN NULL;\n"
                + "            END IF;\n"
                + "            -- Close the open version no earlier than 1 microsecond after it began (a transaction\n"
                + "            -- that started before the one that wrote it has an older now()), and open the next\n"
                + "            -- version exactly there, so the chain stays contiguous.\n"
                + closeOpenVersion(key, "            ")
                + "            INSERT INTO " + history + " (" + insertColumns + ")\n"
                + "            VALUES (" + columnList(shape.versioned(), c -> "NEW." + c.quoted())
                + ", COALESCE(_closed_at, _now), 'infinity', 2, COALESCE(_chain, 1), " + CONTEXT_VALUES + ");\n"
                + "            RETURN NULL;\n"
                + "        END IF;\n"
                + "        -- The primary key changed: the old key's chain ends with a tombstone and the new key's\n"
                + "        -- chain starts with an insert, as if the row had been deleted and inserted.\n"
                + "    END IF;\n"
                + "\n"
                + "    IF TG_OP <> 'INSERT' THEN\n"
                + "        -- DELETE (or the old key of a key update): close the open version and write a tombstone\n"
                + "        -- with the last values and an empty period at the closing instant.\n"
                + closeOpenVersion(key, "        ")
                + "        INSERT INTO " + history + " (" + insertColumns + ")\n"
                + "        VALUES (" + columnList(shape.versioned(), c -> "OLD." + c.quoted())
                + ", COALESCE(_closed_at, _now), COALESCE(_closed_at, _now), 3, COALESCE(_chain, 1), "
                + CONTEXT_VALUES + ");\n"
                + "        IF TG_OP = 'DELETE' THEN\n"
                + "            RETURN NULL;\n"
                + "        END IF;\n"
                + "    END IF;\n"
                + "\n"
                + "    -- INSERT (or the new key of a key update): start no earlier than the end of the key's last\n"
                + "    -- version, so a delete and re-insert (in this transaction, or by a transaction that began\n"
                + "    -- earlier but writes later) never overlaps the versions before it. FOR UPDATE makes a\n"
                + "    -- REPEATABLE READ writer that cannot see the latest version fail with a serialization error.\n"
                + "    SELECT h.valid_to, h.chain_no INTO _last_to, _chain\n"
                + "      FROM " + history + " AS h\n"
                + "     WHERE " + keyMatch("h.", "NEW.") + "\n"
                + "     ORDER BY h.valid_from DESC, h.valid_to DESC\n"
                + "     LIMIT 1\n"
                + "       FOR UPDATE;\n"
                + "    IF _last_to = 'infinity' THEN\n"
                + "        RAISE EXCEPTION 'tidemark: history of %.% already has an open version for key %',\n"
                + "              TG_TABLE_SCHEMA, TG_TABLE_NAME, " + row(shape.keyColumns(), "NEW.", false) + "::text\n"
                + "              USING ERRCODE = 'unique_violation',\n"
                + "                    HINT = 'History is out of step with the table (was the trigger disabled?);"
                + " run TemporalTable.checkInvariants().';\n"
                + "    END IF;\n"
                + "    INSERT INTO " + history + " (" + insertColumns + ")\n"
                + "    VALUES (" + columnList(shape.versioned(), c -> "NEW." + c.quoted())
                + ", GREATEST(_now, _last_to), 'infinity', 1, COALESCE(_chain, 0) + 1, " + CONTEXT_VALUES + ")\n"
                + "    ON CONFLICT (" + keyList("") + ", chain_no) WHERE operation = 1 DO NOTHING;\n"
                + "    IF NOT FOUND THEN\n"
                + "        -- REPEATABLE READ raises this itself; READ COMMITTED gets here only if the other transaction\n"
                + "        -- committed while this one waited. Either way: retry the transaction.\n"
                + "        RAISE EXCEPTION 'tidemark: a concurrent transaction started the same history chain of %.% for key %',\n"
                + "              TG_TABLE_SCHEMA, TG_TABLE_NAME, " + row(shape.keyColumns(), "NEW.", false) + "::text\n"
                + "              USING ERRCODE = 'serialization_failure';\n"
                + "    END IF;\n"
                + "    RETURN NULL;\n"
                + "END;\n";
    }

    private String closeOpenVersion(String key, String indent) {
        return indent + "UPDATE " + history + " AS h\n"
                + indent + "   SET valid_to = GREATEST(_now, h.valid_from + interval '1 microsecond')\n"
                + indent + " WHERE " + key + " AND h.valid_to = 'infinity'\n"
                + indent + "RETURNING h.valid_to, h.chain_no INTO _closed_at, _chain;\n";
    }

    public SqlStep writeFunction() {
        return function(names.writeFunction(), writeFunctionBody(),
                "The " + (config.triggerMode() == TriggerMode.ROW ? "row" : "statement") + " triggers' function."
                        + " SECURITY DEFINER: it writes history as its owner, so the application\n"
                        + "role needs no privilege on the history table and cannot forge or rewrite it. search_path is\n"
                        + "pinned and every name qualified, so a session search_path cannot reroute history.");
    }

    public SqlStep revokeWriteFunction() {
        return new SqlStep("Nobody else may attach this SECURITY DEFINER function to a table of their own.",
                "REVOKE ALL ON FUNCTION " + names.writeFunction().quoted() + "() FROM PUBLIC");
    }

    /** The triggers that call the write function: one row trigger, or three statement triggers. */
    public List<SqlStep> writeTriggers() {
        if (config.triggerMode() == TriggerMode.ROW) {
            return List.of(new SqlStep("Every row change of the table, whoever makes it, is recorded in the same statement.",
                    "CREATE OR REPLACE TRIGGER " + PgName.quote(names.rowTrigger())
                            + "\n    AFTER INSERT OR UPDATE OR DELETE ON " + table
                            + "\n    FOR EACH ROW EXECUTE FUNCTION " + names.writeFunction().quoted() + "()"));
        }
        List<String> triggers = names.statementTriggers();
        return List.of(statementTrigger(triggers.get(0), "INSERT", "NEW TABLE AS new_rows",
                        "Every statement's changes are recorded set-based, in the same statement, from its transition tables."),
                statementTrigger(triggers.get(1), "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows",
                        "Updates: old and new rows are paired by primary key."),
                statementTrigger(triggers.get(2), "DELETE", "OLD TABLE AS old_rows", "Deletes."));
    }

    private SqlStep statementTrigger(String name, String event, String referencing, String comment) {
        return new SqlStep(comment, "CREATE OR REPLACE TRIGGER " + PgName.quote(name)
                + "\n    AFTER " + event + " ON " + table + " REFERENCING " + referencing
                + "\n    FOR EACH STATEMENT EXECUTE FUNCTION " + names.writeFunction().quoted() + "()");
    }

    /** The triggers of the other mode, dropped when evolve switches modes. */
    public List<SqlStep> dropOtherModeTriggers() {
        TriggerMode other = config.triggerMode() == TriggerMode.ROW ? TriggerMode.STATEMENT : TriggerMode.ROW;
        return names.writeTriggers(other).stream().map(t -> new SqlStep("Switching trigger mode.",
                "DROP TRIGGER IF EXISTS " + PgName.quote(t) + " ON " + table)).toList();
    }

    // --- TRUNCATE ------------------------------------------------------------------------------------------------

    public String truncateFunctionBody() {
        if (config.truncatePolicy() == TruncatePolicy.REFUSE) {
            return "\n"
                    + "BEGIN\n"
                    + tableGuard()
                    + "    RAISE EXCEPTION 'tidemark: TRUNCATE of %.% is refused because its history would lose track"
                    + " of the rows', TG_TABLE_SCHEMA, TG_TABLE_NAME\n"
                    + "          USING ERRCODE = 'feature_not_supported',\n"
                    + "                HINT = 'DELETE the rows instead (history records each one), or configure"
                    + " TruncatePolicy.CLOSE_VERSIONS.';\n"
                    + "END;\n";
        }
        String versionColumns = columnList(shape.versioned(), Column::quoted);
        return "\n"
                + contextDeclarations()
                + "BEGIN\n"
                + tableGuard()
                + "    -- TRUNCATE deletes every row without firing row triggers: close every open version and\n"
                + "    -- write its tombstone, exactly as a DELETE of each row would have.\n"
                + "    WITH closed AS (\n"
                + "        UPDATE " + history + " AS h\n"
                + "           SET valid_to = GREATEST(_now, h.valid_from + interval '1 microsecond')\n"
                + "         WHERE h.valid_to = 'infinity'\n"
                + "        RETURNING " + columnList(shape.versioned(), c -> "h." + c.quoted()) + ", h.valid_to, h.chain_no\n"
                + "    )\n"
                + "    INSERT INTO " + history + " (" + versionColumns + ", valid_from, valid_to, operation, chain_no, "
                + CONTEXT_COLUMNS + ")\n"
                + "    SELECT " + columnList(shape.versioned(), c -> "c." + c.quoted())
                + ", c.valid_to, c.valid_to, 3, c.chain_no, " + CONTEXT_VALUES + "\n"
                + "      FROM closed AS c;\n"
                + "    RETURN NULL;\n"
                + "END;\n";
    }

    public SqlStep truncateFunction() {
        return function(names.truncateFunction(), truncateFunctionBody(),
                config.truncatePolicy() == TruncatePolicy.REFUSE
                        ? "TRUNCATE fires no row trigger; this configuration refuses it."
                        : "TRUNCATE fires no row trigger; this closes every open version instead of leaving them open.");
    }

    public SqlStep revokeTruncateFunction() {
        return new SqlStep("Nobody else may attach this SECURITY DEFINER function to a table of their own.",
                "REVOKE ALL ON FUNCTION " + names.truncateFunction().quoted() + "() FROM PUBLIC");
    }

    public SqlStep truncateTrigger() {
        String timing = config.truncatePolicy() == TruncatePolicy.REFUSE ? "BEFORE" : "AFTER";
        return new SqlStep("TRUNCATE policy: " + config.truncatePolicy() + ".",
                "CREATE OR REPLACE TRIGGER " + PgName.quote(names.truncateTrigger())
                        + "\n    " + timing + " TRUNCATE ON " + table
                        + "\n    FOR EACH STATEMENT EXECUTE FUNCTION " + names.truncateFunction().quoted() + "()");
    }

    // --- point-in-time -------------------------------------------------------------------------------------------

    public String asOfFunctionBody() {
        String select = shape.allColumns().stream()
                .map(c -> shape.isVersioned(c.name()) ? "h." + c.quoted()
                        : "NULL::" + c.type() + " AS " + c.quoted())
                .collect(Collectors.joining(", "));
        return "\n"
                + "DECLARE\n"
                + "    _horizon timestamptz;\n"
                + "BEGIN\n"
                + "    -- Before the retention horizon, versions may have been pruned: refuse rather than answer wrong.\n"
                + "    SELECT r.pruned_before INTO _horizon\n"
                + "      FROM " + REGISTRY + " AS r\n"
                + "     WHERE r.source_schema = " + PgName.literal(shape.table().schema().orElseThrow())
                + " AND r.source_table = " + PgName.literal(shape.table().name()) + ";\n"
                + "    IF at < _horizon THEN\n"
                + "        RAISE EXCEPTION 'tidemark: history of " + escapeFormat(shape.table().toString())
                + " before % was pruned; ask for an instant at or after it', _horizon\n"
                + "              USING ERRCODE = 'data_exception';\n"
                + "    END IF;\n"
                + "    RETURN QUERY\n"
                + "    SELECT " + select + "\n"
                + "      FROM " + history + " AS h\n"
                + "     WHERE tstzrange(h.valid_from, h.valid_to) @> at;\n"
                + "END;\n";
    }

    public SqlStep asOfFunction() {
        PgName fn = names.asOfFunction();
        String sql = "CREATE OR REPLACE FUNCTION " + fn.quoted() + "(at timestamptz)\n"
                + "    RETURNS SETOF " + table + "\n"
                + "    LANGUAGE plpgsql\n"
                + "    STABLE\n"
                + "    SET search_path = " + PINNED_SEARCH_PATH + "\n"
                + "AS " + TAG + asOfFunctionBody() + TAG;
        return new SqlStep("The table as it was at an instant, as its own row type, so point-in-time joins are plain\n"
                + "SQL: SELECT * FROM " + fn + "('2024-01-01') AS p JOIN ... Runs with the caller's rights.", sql);
    }

    // --- seeding and registry ------------------------------------------------------------------------------------

    public SqlStep lockTable() {
        return new SqlStep("Keep writers out until the trigger is in place, so no change slips between the seed and\n"
                + "the trigger. Readers are not blocked.",
                "LOCK TABLE " + table + " IN SHARE ROW EXCLUSIVE MODE");
    }

    public SqlStep seed() {
        String from = config.seedValidFromColumn()
                .map(col -> "COALESCE(t." + PgName.quote(col) + "::timestamptz, pg_catalog.now())")
                .orElse("pg_catalog.now()");
        return new SqlStep("Every existing row becomes an open version (operation 1), dated "
                + config.seedValidFromColumn().map(c -> "from column " + c).orElse("at install time") + ".",
                "INSERT INTO " + history + " (" + columnList(shape.versioned(), Column::quoted)
                        + ", valid_from, valid_to, operation, chain_no)\n"
                        + "SELECT " + columnList(shape.versioned(), c -> "t." + c.quoted()) + ", " + from
                        + ", 'infinity', 1, 1\n  FROM " + table + " AS t");
    }

    public static List<SqlStep> createRegistry() {
        // IF NOT EXISTS would still ask for CREATE on the database (schema) and on the schema (table) before
        // looking: an installer that only has the documented registry grants could not run the script.
        return List.of(new SqlStep("Tidemark's registry of temporal tables: one row per temporal table, with its options,\n"
                + "versioned columns, the hash of its generated function (verify() reports drift against it) and the\n"
                + "retention horizon. Created by the first installation (CREATE on the database, once); later ones\n"
                + "need only USAGE on the schema and SELECT, INSERT, UPDATE, DELETE on the table.",
                "DO $tidemark$\n"
                        + "BEGIN\n"
                        + "    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'tidemark') THEN\n"
                        + "        CREATE SCHEMA \"tidemark\";\n"
                        + "    END IF;\n"
                        + "    IF pg_catalog.to_regclass('\"tidemark\".\"temporal_tables\"') IS NULL THEN\n"
                        + "        CREATE TABLE " + REGISTRY + " (\n"
                        + "            source_schema     text        NOT NULL,\n"
                        + "            source_table      text        NOT NULL,\n"
                        + "            history_schema    text        NOT NULL,\n"
                        + "            history_table     text        NOT NULL,\n"
                        + "            key_columns       jsonb       NOT NULL,\n"
                        + "            versioned_columns jsonb       NOT NULL,\n"
                        + "            orphan_columns    jsonb       NOT NULL DEFAULT '[]',\n"
                        + "            options           jsonb       NOT NULL,\n"
                        + "            function_hash     text        NOT NULL,\n"
                        + "            installed_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),\n"
                        + "            evolved_at        timestamptz,\n"
                        + "            pruned_before     timestamptz,\n"
                        + "            PRIMARY KEY (source_schema, source_table),\n"
                        + "            UNIQUE (history_schema, history_table)\n"
                        + "        );\n"
                        + "    END IF;\n"
                        + "END\n"
                        + "$tidemark$"));
    }

    /** Inserts or refreshes this table's registry row. Literals come from the catalog and the configuration. */
    public SqlStep register(RegistryEntry entry) {
        return new SqlStep("Register the table, its versioned columns and the hash of its generated function.",
                "INSERT INTO " + REGISTRY + " (source_schema, source_table, history_schema, history_table,\n"
                        + "        key_columns, versioned_columns, orphan_columns, options, function_hash)\n"
                        + "VALUES (" + PgName.literal(entry.table().schema().orElseThrow()) + ", "
                        + PgName.literal(entry.table().name()) + ", "
                        + PgName.literal(entry.historyTable().schema().orElseThrow()) + ", "
                        + PgName.literal(entry.historyTable().name()) + ",\n"
                        + "        " + PgName.literal(entry.keyColumnsJson()) + ",\n"
                        + "        " + PgName.literal(entry.versionedColumnsJson()) + ",\n"
                        + "        " + PgName.literal(entry.orphanColumnsJson()) + ",\n"
                        + "        " + PgName.literal(entry.optionsJson()) + ",\n"
                        + "        " + PgName.literal(entry.functionHash()) + ")\n"
                        + "ON CONFLICT (source_schema, source_table) DO UPDATE\n"
                        + "   SET key_columns = EXCLUDED.key_columns, versioned_columns = EXCLUDED.versioned_columns,\n"
                        + "       orphan_columns = EXCLUDED.orphan_columns, options = EXCLUDED.options,\n"
                        + "       function_hash = EXCLUDED.function_hash, evolved_at = pg_catalog.now()");
    }

    // --- helpers -------------------------------------------------------------------------------------------------

    private SqlStep function(PgName name, String body, String comment) {
        String sql = "CREATE OR REPLACE FUNCTION " + name.quoted() + "()\n"
                + "    RETURNS trigger\n"
                + "    LANGUAGE plpgsql\n"
                + "    SECURITY DEFINER\n"
                + "    SET search_path = " + PINNED_SEARCH_PATH + "\n"

                + "AS " + TAG + body + TAG;
        return new SqlStep(comment, sql);
    }

    String contextDeclarations() {
        String p = config.settingsPrefix();
        return "DECLARE\n"
                + "    -- Change context: transaction-local settings pushed by the application; '' means absent.\n"
                + "    _now             timestamptz := pg_catalog.now();\n"
                + "    _changed_by      text  := NULLIF(pg_catalog.current_setting(" + PgName.literal(p + ".changed_by")
                + ", true), '');\n"
                + "    _changed_by_name text  := NULLIF(pg_catalog.current_setting("
                + PgName.literal(p + ".changed_by_name") + ", true), '');\n"
                + "    _correlation_id  text  := NULLIF(pg_catalog.current_setting("
                + PgName.literal(p + ".correlation_id") + ", true), '');\n"
                + "    _reason          text  := NULLIF(pg_catalog.current_setting(" + PgName.literal(p + ".reason")
                + ", true), '');\n"
                + "    _extra           jsonb := NULLIF(pg_catalog.current_setting(" + PgName.literal(p + ".extra")
                + ", true), '')::jsonb;\n";
    }

    /** Refuses to run for another table: defence in depth on top of the REVOKE. */
    String tableGuard() {
        String schema = shape.table().schema().orElseThrow();
        return "    IF TG_TABLE_SCHEMA <> " + PgName.literal(schema) + " OR TG_TABLE_NAME <> "
                + PgName.literal(shape.table().name()) + " THEN\n"
                + "        RAISE EXCEPTION 'tidemark: % was generated for " + escapeFormat(shape.table().toString())
                + ", not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME\n"
                + "              USING ERRCODE = 'insufficient_privilege';\n"
                + "    END IF;\n";
    }

    String keyMatch(String left, String right) {
        return shape.keyColumns().stream().map(c -> left + c.quoted() + " = " + right + c.quoted())
                .collect(Collectors.joining(" AND "));
    }

    String keyList(String prefix) {
        return columnList(shape.keyColumns(), c -> prefix + c.quoted());
    }

    static String row(List<Column> columns, String prefix, boolean textWhereNoEquality) {
        return "(" + columns.stream()
                .map(c -> prefix + c.quoted() + (textWhereNoEquality && c.noEquality() ? "::text" : ""))
                .collect(Collectors.joining(", ")) + ")";
    }

    static String columnList(List<Column> columns, Function<Column, String> render) {
        return columns.stream().map(render).collect(Collectors.joining(", "));
    }

    /** A name inside a RAISE format string and a SQL literal: quote doubled, % doubled. */
    private static String escapeFormat(String text) {
        return text.replace("'", "''").replace("%", "%%");
    }
}
