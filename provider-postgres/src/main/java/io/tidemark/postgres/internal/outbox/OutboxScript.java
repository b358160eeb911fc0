package io.tidemark.postgres.internal.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.TruncatePolicy;
import io.tidemark.postgres.internal.FunctionNames;
import io.tidemark.sync.internal.sql.SqlTemplate;
import io.tidemark.sync.internal.sql.PgName;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Generates the SQL of one outbox: the same text {@code install} runs and {@code script} hands to a DBA, so it
 * is formatted and commented for review. Every name is schema-qualified and quoted. Every generated function
 * pins its {@code search_path} but the capture function, which runs on every writing statement: it qualifies every
 * function, operator and type instead of paying for the setting's save and restore on each call.
 *
 * <p>The design, in short (the header of the script explains it to the DBA):
 * <ul>
 *   <li>a change's version is {@code max(writing xid, newest finished xid at capture)}, and the change
 *       function returns only versions below the transaction horizon, so a stored watermark can never pass a
 *       change that is still to come (the in-flight gap of the reference function cannot happen), and changes
 *       of one row keep their commit order;</li>
 *   <li>INSERT, UPDATE and DELETE are captured by statement triggers over transition tables: one INSERT into the
 *       outbox per statement (measured against row triggers, see benchmarks/README-outbox.md);</li>
 *   <li>each change is stored as the JSON element the change function returns, so reading is an index range
 *       scan and one aggregate.</li>
 * </ul>
 */
public final class OutboxScript {

    /**
     * Rendering of JSON must not depend on the session that happens to write or read: the settings timestamptz,
     * float, bytea and interval values are rendered after. The script does not know the captured columns' types
     * (script() runs without a connection), so the capture function pins all four.
     */
    static final String RENDERING_SETTINGS = """
            SET "TimeZone" = 'UTC'
            SET extra_float_digits = 1
            SET bytea_output = 'hex'
            SET "IntervalStyle" = 'iso_8601'""";

    /** The change function's settings: its search_path pinned, and the rendering settings. */
    static final String PINNED_SETTINGS = "SET search_path = pg_catalog, pg_temp\n" + RENDERING_SETTINGS;

    /**
     * A change's version: at least the writing transaction's xid8, and at least the newest transaction that had
     * finished when the change was captured (pg_snapshot_xmax - 1 of a snapshot taken after the row changed).
     */
    static final String VERSION_EXPRESSION = "GREATEST(pg_catalog.pg_current_xact_id()::pg_catalog.text::bigint,"
            + " pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::pg_catalog.text::bigint"
            + " OPERATOR(pg_catalog.-) 1)";


    private final OutboxNames names;
    private final OutboxShape shape;
    private final CaptureShape capture;
    private final TruncatePolicy truncate;
    private final String channel;

    /**
     * @param channel the notification channel, or null to generate no {@code pg_notify}
     */
    public OutboxScript(OutboxNames names, OutboxShape shape, CaptureShape capture, TruncatePolicy truncate,
                        String channel) {
        this.names = Objects.requireNonNull(names, "names");
        this.shape = Objects.requireNonNull(shape, "shape");
        this.capture = Objects.requireNonNull(capture, "capture");
        this.truncate = Objects.requireNonNull(truncate, "truncate");
        this.channel = channel;
    }

    /** A full-image outbox's script (see {@link CaptureShape#FULL_IMAGE}). */
    public OutboxScript(OutboxNames names, OutboxShape shape, TruncatePolicy truncate, String channel) {
        this(names, shape, CaptureShape.FULL_IMAGE, truncate, channel);
    }

    /** The whole script, without transaction control (the caller or the migration tool wraps it in one). */
    public String render() {
        String ddl = ddl();
        return String.join("\n", ddl, recordSection(record(ddl)));
    }

    /** What the script records about itself in the state table's comment (see {@link OutboxRecord}). */
    public OutboxRecord record() {
        return record(ddl());
    }

    private OutboxRecord record(String ddl) {
        return OutboxRecord.of(names, shape, truncate, capture, channel, OutboxRecord.hashOf(ddl));
    }

    /**
     * The bodies of the generated functions as PostgreSQL stores them ({@code pg_proc.prosrc}: the text between
     * the dollar-quote tags), by signature as {@code to_regprocedure} reads it.
     */
    public Map<String, String> functionBodies() {
        String ddl = ddl();
        Map<String, String> bodies = new LinkedHashMap<>();
        bodies.put(names.captureFunction().quoted() + "()", body(ddl, "capture"));
        bodies.put(changeFunctionSignature(names), body(ddl, "changes"));
        bodies.put(names.trimFunction().quoted() + "(bigint, integer)", body(ddl, "trim"));
        if (channel != null) {
            bodies.put(armSignature(names), body(ddl, "arm"));
        }
        return bodies;
    }

    /**
     * What PostgreSQL records of each generated function besides its body, by signature as in
     * {@link #functionBodies}: {@code SECURITY DEFINER}, {@code STABLE}, and each {@code SET} as
     * {@code pg_proc.proconfig} holds it ({@code name=value}, unquoted). Read off the generated text, so it cannot
     * drift from what the script creates. The settings pin how the JSON is rendered, and STABLE makes every
     * statement of the change function read the snapshot of the query that calls it: an edit to either changes what
     * a destination receives.
     */
    public Map<String, List<String>> functionAttributes() {
        String ddl = ddl();
        Map<String, List<String>> attributes = new LinkedHashMap<>();
        attributes.put(names.captureFunction().quoted() + "()", attributes(ddl, "capture"));
        attributes.put(changeFunctionSignature(names), attributes(ddl, "changes"));
        attributes.put(names.trimFunction().quoted() + "(bigint, integer)", attributes(ddl, "trim"));
        if (channel != null) {
            attributes.put(armSignature(names), attributes(ddl, "arm"));
        }
        return attributes;
    }

    /** The attribute lines between {@code CREATE OR REPLACE FUNCTION} and {@code AS $tag$}. */
    private static List<String> attributes(String ddl, String tag) {
        int as = ddl.indexOf("AS $" + tag + "$");
        int create = ddl.lastIndexOf("CREATE OR REPLACE FUNCTION", as);
        if (as < 0 || create < 0) {
            throw new IllegalStateException("generated SQL has no function of body $" + tag + "$");
        }
        List<String> attributes = new ArrayList<>();
        for (String line : ddl.substring(create, as).split("\n")) {
            String l = line.strip();
            if (l.equals("SECURITY DEFINER") || l.equals("STABLE") || l.equals("IMMUTABLE")) {
                attributes.add(l);
            } else if (l.startsWith("SET ")) {
                String[] setting = l.substring(4).split(" = ", 2);
                attributes.add(setting[0].replace("\"", "") + "=" + setting[1].replaceAll("^'(.*)'$", "$1"));
            }
        }
        return attributes;
    }

    /** The arm function's signature, as {@link #functionBodies} keys it. */
    static String armSignature(OutboxNames names) {
        return names.armFunction().quoted() + "()";
    }

    /** The change function's signature, as {@link #functionBodies} keys it. */
    static String changeFunctionSignature(OutboxNames names) {
        return names.changeFunction().quoted() + "(json)";
    }

    private static String body(String ddl, String tag) {
        String open = "AS $" + tag + "$";
        int start = ddl.indexOf(open);
        int end = ddl.indexOf("$" + tag + "$;", start + open.length());
        if (start < 0 || end < 0) {
            throw new IllegalStateException("generated SQL has no $" + tag + "$ body");
        }
        return ddl.substring(start + open.length(), end);
    }

    /**
     * Takes the transaction-level advisory lock every install and upgrade of the outboxes of one table takes
     * first: concurrent installers queue behind each other, and each one reads what the one before committed.
     */
    static String lockStatement(OutboxNames names) {
        return SqlTemplate.of("SELECT pg_advisory_xact_lock(hashtextextended({{lock_key}}, 0));")
                .with("lock_key", PgName.literal("tidemark outbox " + names.table()))
                .render();
    }

    /** Section 7 alone: records an outbox installed by an earlier version that is exactly what this generates. */
    String recordStatement() {
        return recordSection(record());
    }

    private String ddl() {
        boolean keys = capture == CaptureShape.KEYS;
        return String.join("\n", header(), preflight(), keys ? keysOutboxTables() : outboxTables(), wakeUpSection(),
                keys ? keysCaptureFunction() : captureFunction(), triggers(), historyStart(), changeFunction(),
                trimFunction());
    }

    private String recordSection(OutboxRecord record) {
        return SqlTemplate.of("""
                -- 7. What was installed --------------------------------------------------------------------------------
                -- The options that shape what a destination receives, and a hash of the SQL above (comment lines left
                -- out). PostgresOutbox.install compares them with its own configuration and refuses to change an
                -- outbox installed with other options; PostgresOutbox.upgrade replaces what differs.
                COMMENT ON TABLE {{state}} IS {{record}};
                """)
                .with("state", names.state().quoted())
                .with("record", PgName.literal(record.toJson()))
                .render();
    }

    private String header() {
        return SqlTemplate.of("""
                -- =====================================================================================================
                -- Tidemark outbox for {{table}}
                -- =====================================================================================================
                -- Captures every committed INSERT, UPDATE and DELETE on {{table}} into {{outbox}} and serves
                -- the changes through {{function}}(json) under the Tidemark procedure contract.
                --
                -- Run this script in ONE transaction at READ COMMITTED (Flyway and Liquibase do so by default).
                -- Running it again is harmless: it creates what is missing and replaces functions and triggers.
                -- No superuser and no extension are needed: the role running it must own {{table}} (or hold
                -- TRIGGER on it) and may create objects in the outbox's schema. Writers need no privilege on
                -- the outbox: the capture function is SECURITY DEFINER.
                --
                --   key:       {{key}}
                --   captured:  {{columns}}
                --   truncate:  {{truncate}}
                --   wake-up:   {{wakeup}}{{capture_line}}
                --
                -- Why no change can be skipped
                --   A change's version is max(the writing transaction's xid8, the newest transaction that had
                --   finished when the change was captured). The change function returns only changes whose
                --   version is below the horizon pg_snapshot_xmin(pg_current_snapshot()): every transaction
                --   below it has finished, and every transaction still running or yet to start stamps its
                --   changes at or above it. Once the watermark passes a version, nothing can appear below it.
                --   An outbox id used as the version (docs/contract.md of Tidemark) does not have this property:
                --   ids are handed out in trigger order, not in transaction order, and a transaction that
                --   took its id first but commits last is skipped for good.
                --   The "newest finished transaction" part keeps the changes of one row in commit order: a
                --   transaction that changes a row after another one committed gets a version at least as
                --   high, and changes of one version are returned in capture order (id).
                --
                -- To change what an installed outbox captures (columns, payload keys, change function, ...), run
                -- the script of PostgresOutbox.upgradeScript or call PostgresOutbox.upgrade: PostgresOutbox.install
                -- refuses to change an outbox installed with other options (section 7 records them).
                """)
                .with("table", comment(names.table().toString()))
                .with("outbox", comment(names.outbox().toString()))
                .with("function", comment(names.changeFunction().toString()))
                .with("key", comment(columnList(shape.key())))
                .with("columns", comment(columnList(shape.columns())))
                .with("capture_line", capture == CaptureShape.FULL_IMAGE ? ""
                        : "\n--   capture:   keys only (CaptureShape.KEYS): the change function reads each changed row"
                        + "\n--              as it is at read time and returns one net change per key, whose $version is the"
                        + "\n--              version of its first change in the read, so no stored position passes a change"
                        + "\n--              of a key not yet delivered (section 5)")
                .with("truncate", truncate == TruncatePolicy.REFUSE
                        ? "refused with an error (TruncatePolicy.REFUSE)"
                        : "recorded as a delete of every row (TruncatePolicy.RECORD_DELETES)")
                .with("wakeup", channel == null ? "none (the poll interval only)"
                        : comment(SqlTemplate.of("pg_notify({{channel}}, {{payload}}) once a reader waits for it (section 2b)")
                                .with("channel", PgName.literal(channel)).with("payload", notifyPayload()).render()))
                .render();
    }

    private String preflight() {
        return SqlTemplate.of("""
                -- 1. Preflight -----------------------------------------------------------------------------------------
                -- One install at a time (several application instances may install at start-up), and nothing is
                -- created unless the table looks as expected.
                {{lock}}

                DO $preflight$
                DECLARE
                    tbl      regclass := to_regclass({{table_literal}});
                    outbox   regclass := to_regclass({{outbox_literal}});
                    missing  text;
                BEGIN
                    IF current_setting('transaction_isolation') <> 'read committed' THEN
                        RAISE EXCEPTION 'Install the Tidemark outbox of % at READ COMMITTED, not %',
                            {{table_literal}}, current_setting('transaction_isolation')
                            USING HINT = 'Where the outbox history starts is read from a fresh snapshot taken'
                                         ' after the triggers exist.';
                    END IF;
                    IF tbl IS NULL THEN
                        RAISE EXCEPTION 'Table % does not exist', {{table_literal}};
                    END IF;
                    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = tbl) <> 'r' THEN
                        RAISE EXCEPTION '% is not an ordinary table; the Tidemark outbox captures ordinary tables',
                            {{table_literal}};
                    END IF;
                    SELECT string_agg(quote_ident(col), ', ') INTO missing
                      FROM unnest(ARRAY[{{column_literals}}]::text[]) AS col
                     WHERE NOT EXISTS (SELECT FROM pg_attribute a
                                        WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0
                                          AND NOT a.attisdropped AND a.attgenerated <> 'v');
                    IF missing IS NOT NULL THEN
                        RAISE EXCEPTION 'Table % has no column % that a trigger can capture', {{table_literal}}, missing
                            USING HINT = 'Virtual generated columns are NULL in triggers: capture their inputs instead.';
                    END IF;
                    -- The key identifies the row of a delete: it must be unique and never NULL. Not deferrable
                    -- either: one statement could then move keys through each other, which row capture cannot order.
                    IF NOT EXISTS (
                        SELECT FROM pg_index i
                         WHERE i.indrelid = tbl AND i.indisunique AND i.indisvalid AND i.indimmediate
                           AND i.indpred IS NULL AND i.indexprs IS NULL
                           AND i.indnkeyatts = {{key_count}}
                           AND (SELECT array_agg(a.attname::text)
                                  FROM pg_attribute a
                                 WHERE a.attrelid = tbl AND a.attnotnull
                                   AND a.attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1]))
                               @> ARRAY[{{key_literals}}]::text[])
                    THEN
                        RAISE EXCEPTION 'The key (%) of % is not its primary key or a unique, not deferrable index over NOT NULL columns',
                            {{key_text}}, {{table_literal}};
                    END IF;
                    -- CREATE TABLE IF NOT EXISTS below would silently adopt someone else's table of that name.
                    IF outbox IS NOT NULL AND (SELECT count(*) FROM pg_attribute a
                                                WHERE a.attrelid = outbox AND a.attnum > 0 AND NOT a.attisdropped
                                                  AND (a.attname::text, format_type(a.atttypid, a.atttypmod)) IN
                                                      (('version', 'bigint'), ('id', 'bigint'), ('xact_id', 'xid8'),
                                                       ('operation', 'character(1)'), {{shape_column}})) <> 5
                    THEN
                        RAISE EXCEPTION 'Table % already exists and is not a Tidemark outbox{{shape_text}} (it lacks version, id, xact_id, operation or {{shape_column_name}})',
                            {{outbox_literal}}
                            USING HINT = 'Name another table with PostgresOutbox.Builder.outboxTable(...), or drop this one.';
                    END IF;{{keys_check}}
                END
                $preflight$;
                """)
                .with("lock", lockStatement(names))
                .with("table_literal", PgName.literal(names.table().quoted()))
                .with("outbox_literal", PgName.literal(names.outbox().quoted()))
                .with("column_literals", literals(shape.columns(), OutboxColumn::name))
                .with("key_count", Integer.toString(shape.key().size()))
                .with("key_literals", literals(shape.key(), OutboxColumn::name))
                .with("key_text", PgName.literal(columnList(shape.key())))
                .with("shape_column", capture == CaptureShape.KEYS ? "('changed', 'text[]')" : "('change', 'json')")
                .with("shape_column_name", capture == CaptureShape.KEYS ? "changed" : "change")
                .with("shape_text", capture == CaptureShape.KEYS ? " of keys (CaptureShape.KEYS)" : "")
                .with("keys_check", capture == CaptureShape.KEYS ? keysPreflight() : "")
                .render();
    }

    private String outboxTables() {
        return SqlTemplate.of("""
                -- 2. The outbox ----------------------------------------------------------------------------------------
                CREATE TABLE IF NOT EXISTS {{outbox}} (
                    version    bigint   NOT NULL,
                    id         bigint   GENERATED ALWAYS AS IDENTITY,
                    xact_id    xid8     NOT NULL,
                    operation  char(1)  NOT NULL CHECK (operation IN ('I', 'U', 'D')),
                    change     json     NOT NULL,
                    CONSTRAINT {{pkey}} PRIMARY KEY (version, id)
                );
                COMMENT ON TABLE {{outbox}} IS {{outbox_comment}};
                COMMENT ON COLUMN {{outbox}}.version IS 'max(xact_id, newest transaction finished at capture); returned once below pg_snapshot_xmin(pg_current_snapshot())';
                COMMENT ON COLUMN {{outbox}}.id IS 'capture order: orders the changes of one version';
                COMMENT ON COLUMN {{outbox}}.xact_id IS 'the writing transaction, pg_current_xact_id()';
                COMMENT ON COLUMN {{outbox}}.change IS 'the change as returned: $operation, $version, $changed (updates), then the key and the captured columns (deletes: the key only)';

                -- Changes at or below trimmed_through may be missing: written before the outbox existed, or trimmed.
                -- A reader asking for changes after an older version gets a full snapshot (ReasonCode 1) instead.
                CREATE TABLE IF NOT EXISTS {{state}} (
                    singleton        boolean  PRIMARY KEY DEFAULT true CHECK (singleton),
                    trimmed_through  bigint   NOT NULL
                );
                """)
                .with("outbox", names.outbox().quoted())
                .with("pkey", PgName.quote(names.primaryKey()))
                .with("outbox_comment", PgName.literal("Changes of " + names.table() + " captured by Tidemark. Read"
                        + " them with " + names.changeFunction() + "(json); trim them with "
                        + names.trimFunction() + "(bigint, integer)."))
                .with("state", names.state().quoted())
                .render();
    }

    private String captureFunction() {
        return captureFunction(new CaptureParts("""
                -- Runs once per writing statement, so every write pays for it. No SET search_path (a SET clause
                -- saves and restores its setting on every call): every function, operator, type and cast below is
                -- schema-qualified instead, so no search_path of the caller, not even one listing a schema ahead
                -- of pg_catalog, changes what it runs; the transition tables (inserted, old_rows, ...) are found
                -- before any table of those names. The four settings timestamptz, float, bytea and interval values
                -- are rendered after stay pinned: this script does not know the columns' types, and the JSON a
                -- destination receives must not depend on the writing session.\
                """,
                RENDERING_SETTINGS,
                "Every inserted row, with one INSERT per statement.",
                rowsCapture("I", "inserted", shape.columns()),
                SqlTemplate.of("""
                                INSERT INTO {{outbox}} (version, xact_id, operation, change)
                                SELECT v.version, v.xact_id, k.operation, d.change\
                        """)
                        .with("outbox", names.outbox().quoted())
                        .render(),
                ",\n" + SqlTemplate.of("""
                                       LATERAL (SELECT CASE
                                           WHEN k.operation OPERATOR(pg_catalog.=) 'D'
                                           THEN (SELECT pg_catalog.row_to_json(c)
                                                   FROM (SELECT 'D' AS "$operation",
                                                                v.version AS "$version",
                                                                {{old_key_columns}}) AS c)
                                           WHEN k.operation OPERATOR(pg_catalog.=) 'I'
                                           THEN (SELECT pg_catalog.row_to_json(c)
                                                   FROM (SELECT 'I' AS "$operation",
                                                                v.version AS "$version",
                                                                {{new_columns}}) AS c)
                                           ELSE (SELECT pg_catalog.row_to_json(c)
                                                   FROM (SELECT 'U' AS "$operation",
                                                                v.version AS "$version",
                                                                ch.changed AS "$changed",
                                                                {{new_columns}}) AS c)
                                           END AS change) AS d\
                        """)
                        .with("old_key_columns", projection(shape.key(), "o", 40))
                        .with("new_columns", projection(shape.columns(), "n", 40))
                        .render(),
                rowsCapture("D", "deleted", shape.key()),
                truncateBranch(source -> rowsCapture("D", source, shape.key())),
                "Tidemark: captures changes of " + names.table() + " into " + names.outbox() + "."));
    }

    /**
     * What the capture function of each shape records; {@link #captureFunction(CaptureParts)} puts it around what
     * both share (the pairing of an UPDATE's old and new rows by key, the order of deletes before inserts, the
     * notification, the function's attributes and grants).
     *
     * @param header      the comment lines under the section title
     * @param settings    the function's SET clauses
     * @param insertRows  the INSERT branch's rows, {@code deleteRows} the DELETE branch's, at their indentation
     * @param updateInto  the head of the UPDATE branch's INSERT (column and select lists), at its indentation
     * @param updateImage what the UPDATE branch's FROM adds after the pairing ("" for none)
     */
    private record CaptureParts(String header, String settings, String insertComment, String insertRows,
                                String updateInto, String updateImage, String deleteRows, String truncate,
                                String comment) {
    }

    private String captureFunction(CaptureParts parts) {
        return SqlTemplate.of("""
                -- 3. Capture ------------------------------------------------------------------------------------------
                {{header}}
                CREATE OR REPLACE FUNCTION {{capture}}()
                RETURNS trigger
                LANGUAGE plpgsql
                SECURITY DEFINER
                {{settings}}
                AS $capture$
                BEGIN
                    IF TG_OP OPERATOR(pg_catalog.=) 'INSERT' THEN
                        -- {{insert_comment}}
                {{insert_rows}}

                    ELSIF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN
                        -- Old and new rows are paired by key (compared as text). A key that stays is an update when a
                        -- captured column's text changed (never an error, whatever the type; an update that changes
                        -- nothing is skipped); a key that goes is a delete, a key that appears an insert.
                {{update_into}}
                          FROM (SELECT pg_catalog.pg_current_xact_id() AS xact_id,
                                       {{version}} AS version) AS v,
                               old_rows AS o FULL JOIN new_rows AS n ON {{key_join}},
                               LATERAL (SELECT CASE WHEN {{new_key_null}} THEN 'D'
                                                    WHEN {{old_key_null}} THEN 'I'
                                                    ELSE 'U' END AS operation) AS k,
                               LATERAL (SELECT {{changed_names}} AS changed) AS ch{{update_image}}
                         WHERE k.operation OPERATOR(pg_catalog.<>) 'U'
                            OR pg_catalog.cardinality(ch.changed) OPERATOR(pg_catalog.>) 0
                         -- Deletes before inserts (ids in this order): for a key type whose equality is coarser
                         -- than its text (numeric 1.0 to 1.00), a reader applying the delete last would lose the row.
                         ORDER BY k.operation OPERATOR(pg_catalog.=) 'I';
                        IF FOUND THEN
                            {{notify}}
                        END IF;

                    ELSIF TG_OP OPERATOR(pg_catalog.=) 'DELETE' THEN
                        -- The key of every deleted row, with one INSERT per statement.
                {{delete_rows}}

                    ELSIF TG_OP OPERATOR(pg_catalog.=) 'TRUNCATE' THEN
                {{truncate}}
                    END IF;
                    RETURN NULL;
                END
                $capture$;
                REVOKE ALL ON FUNCTION {{capture}}() FROM PUBLIC;
                COMMENT ON FUNCTION {{capture}}() IS {{capture_comment}};
                """)
                .with("header", parts.header())
                .with("capture", names.captureFunction().quoted())
                .with("settings", parts.settings())
                .with("insert_comment", parts.insertComment())
                .with("insert_rows", parts.insertRows())
                .with("update_into", parts.updateInto())
                .with("version", VERSION_EXPRESSION)
                .with("key_join", keyJoin())
                .with("new_key_null", keyIsNull("n"))
                .with("old_key_null", keyIsNull("o"))
                .with("changed_names", changedNames(shape.nonKeyColumns(), 32))
                .with("update_image", parts.updateImage())
                .with("notify", notifyStatement())
                .with("delete_rows", parts.deleteRows())
                .with("truncate", parts.truncate())
                .with("capture_comment", PgName.literal(parts.comment()))
                .render();
    }

    /**
     * One INSERT into the outbox of every row of {@code source} (a transition table, or the table itself before a
     * truncate), all with the statement's version, then a notification if there were any. Rendered at the
     * indentation of an IF branch of the capture function (never re-indented afterwards: a quoted identifier may
     * hold a line break).
     */
    private String rowsCapture(String operation, String source, List<OutboxColumn> columns) {
        return SqlTemplate.of("""
                        INSERT INTO {{outbox}} (version, xact_id, operation, change)
                        SELECT v.version, v.xact_id, '{{operation}}', pg_catalog.row_to_json(c)
                          FROM (SELECT pg_catalog.pg_current_xact_id() AS xact_id,
                                       {{version}} AS version) AS v,
                               {{source}} AS r,
                               LATERAL (SELECT '{{operation}}' AS "$operation",
                                               v.version AS "$version",
                                               {{columns}}) AS c;
                        IF FOUND THEN
                            {{notify}}
                        END IF;\
                """)
                .with("outbox", names.outbox().quoted())
                .with("operation", operation)
                .with("version", VERSION_EXPRESSION)
                .with("source", source)
                .with("columns", projection(columns, "r", 31))
                .with("notify", notifyStatement())
                .render();
    }

    /**
     * The TRUNCATE branch of the capture function: refused, or every row recorded as a delete by {@code deletesOf}
     * (the shape's capture of the rows of a source).
     */
    private String truncateBranch(Function<String, String> deletesOf) {
        if (truncate == TruncatePolicy.REFUSE) {
            return SqlTemplate.of("""
                            -- TruncatePolicy.REFUSE: a truncate fires no DELETE trigger; refuse it rather than lose it.
                            RAISE EXCEPTION 'TRUNCATE of % is refused: it would bypass the capture into %', {{table}}, {{outbox}}
                                USING ERRCODE = 'feature_not_supported',
                                      HINT = 'Use DELETE (captured as deletes), or install the outbox with TruncatePolicy.RECORD_DELETES.';\
                    """)
                    .with("table", PgName.literal(names.table().toString()))
                    .with("outbox", PgName.literal(names.outbox().toString()))
                    .render();
        }
        return SqlTemplate.of("""
                        -- TruncatePolicy.RECORD_DELETES: the key of every row, read before the table is emptied.
                {{capture}}""")
                .with("capture", deletesOf.apply(SqlTemplate.of("ONLY {{table}}")
                        .with("table", names.table().quoted()).render()))
                .render();
    }

    /**
     * Old and new rows of an UPDATE paired by key, compared as text: never an error whatever the type, and keys
     * equal under a coarser equality (numeric 1.0 and 1.00) stay apart.
     */
    private String keyJoin() {
        return shape.key().stream()
                .map(k -> SqlTemplate.of("(n.{{column}})::pg_catalog.text OPERATOR(pg_catalog.=) (o.{{column}})::pg_catalog.text")
                        .with("column", k.quotedName()).render())
                .collect(Collectors.joining(" AND "));
    }

    /** {@code r."first key column" IS NULL}: a transition-table row with no match on the other side. */
    private String keyIsNull(String row) {
        return SqlTemplate.of("{{row}}.{{column}} IS NULL")
                .with("row", row).with("column", shape.key().get(0).quotedName()).render();
    }

    // ---- CaptureShape.KEYS ------------------------------------------------------------------------------------

    /** The outbox column that holds the i-th key column (from 1): positional, so no key column name can clash. */
    private static String keyColumn(int i) {
        return "key_" + i;
    }

    /** {@code o.key_1, o.key_2}: the outbox's key columns, qualified by {@code row}. */
    private String outboxKeyColumns(String row) {
        List<String> columns = new ArrayList<>();
        for (int i = 1; i <= shape.key().size(); i++) {
            columns.add(row.isEmpty() ? keyColumn(i) : row + "." + keyColumn(i));
        }
        return String.join(", ", columns);
    }

    /**
     * KEYS: an existing outbox's key columns must be the key's, of the same types; else the capture would write
     * another key into them (a key changed since the outbox was created: it needs a new outbox).
     */
    private String keysPreflight() {
        return SqlTemplate.of("""

                    -- Keys only: the outbox's key_1, key_2, ... are the key's columns, of the key's types.
                    IF outbox IS NOT NULL AND EXISTS (
                        SELECT FROM unnest(ARRAY[{{key_literals}}]::text[]) WITH ORDINALITY AS k(name, n)
                         WHERE NOT EXISTS (
                            SELECT FROM pg_attribute o, pg_attribute a
                             WHERE o.attrelid = outbox AND o.attname = 'key_' || k.n AND NOT o.attisdropped
                               AND a.attrelid = tbl AND a.attname = k.name AND NOT a.attisdropped
                               AND format_type(o.atttypid, o.atttypmod) = format_type(a.atttypid, a.atttypmod))
                            OR (SELECT count(*) FROM pg_attribute o WHERE o.attrelid = outbox AND NOT o.attisdropped
                                  AND o.attname LIKE 'key\\_%') <> {{key_count}})
                    THEN
                        RAISE EXCEPTION 'The outbox % holds other key columns than the key (%) of %',
                            {{outbox_literal}}, {{key_text}}, {{table_literal}}
                            USING HINT = 'The key or its type changed since the outbox was created: once every reader'
                                         ' has caught up, uninstall the outbox (PostgresOutbox.uninstall) and install it again.';
                    END IF;\
                """)
                .with("key_literals", literals(shape.key(), OutboxColumn::name))
                .with("key_count", Integer.toString(shape.key().size()))
                .with("outbox_literal", PgName.literal(names.outbox().quoted()))
                .with("key_text", PgName.literal(columnList(shape.key())))
                .with("table_literal", PgName.literal(names.table().quoted()))
                .render();
    }

    private String keysOutboxTables() {
        List<String> keyColumns = new ArrayList<>();
        List<String> notNull = new ArrayList<>();
        List<String> keyComments = new ArrayList<>();
        for (int i = 0; i < shape.key().size(); i++) {
            OutboxColumn k = shape.key().get(i);
            keyColumns.add("t." + k.quotedName() + " AS " + keyColumn(i + 1));
            notNull.add("ALTER COLUMN " + keyColumn(i + 1) + " SET NOT NULL");
            keyComments.add(SqlTemplate.of("COMMENT ON COLUMN {{outbox}}.{{column}} IS {{comment}};")
                    .with("outbox", names.outbox().quoted()).with("column", keyColumn(i + 1))
                    .with("comment", PgName.literal("the key column " + k.name() + " of " + names.table()))
                    .render());
        }
        return SqlTemplate.of("""
                -- 2. The outbox ----------------------------------------------------------------------------------------
                -- Keys only (CaptureShape.KEYS): one row per changed row with its key, in columns of the key's own
                -- types (CREATE TABLE AS reads them off the table, so this script is generated without a
                -- connection), the operation, the version and, for an update, the payload keys of the changed
                -- columns. No JSON is built or stored at write time.
                CREATE TABLE IF NOT EXISTS {{outbox}} AS
                SELECT NULL::bigint        AS version,
                       NULL::bigint        AS id,
                       NULL::xid8          AS xact_id,
                       NULL::char(1)       AS operation,
                       NULL::text[]        AS changed,
                       {{key_columns}}
                  FROM ONLY {{table}} AS t
                  WITH NO DATA;
                -- CREATE TABLE AS makes no constraint: they are added once, to the table just created.
                DO $outbox$
                BEGIN
                    IF NOT EXISTS (SELECT FROM pg_constraint c
                                    WHERE c.conrelid = to_regclass({{outbox_literal}}) AND c.conname = {{pkey_literal}})
                    THEN
                        ALTER TABLE {{outbox}}
                            ALTER COLUMN version SET NOT NULL,
                            ALTER COLUMN id SET NOT NULL,
                            ALTER COLUMN xact_id SET NOT NULL,
                            ALTER COLUMN operation SET NOT NULL,
                            {{not_null}},
                            ADD CHECK (operation IN ('I', 'U', 'D')),
                            ADD CONSTRAINT {{pkey}} PRIMARY KEY (version, id);
                        ALTER TABLE {{outbox}} ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
                    END IF;
                END
                $outbox$;
                COMMENT ON TABLE {{outbox}} IS {{outbox_comment}};
                COMMENT ON COLUMN {{outbox}}.version IS 'max(xact_id, newest transaction finished at capture); returned once below pg_snapshot_xmin(pg_current_snapshot())';
                COMMENT ON COLUMN {{outbox}}.id IS 'capture order: orders the changes of one version';
                COMMENT ON COLUMN {{outbox}}.xact_id IS 'the writing transaction, pg_current_xact_id()';
                COMMENT ON COLUMN {{outbox}}.changed IS 'updates: the payload keys of the columns whose text changed ($changed); NULL otherwise';
                {{key_comments}}

                -- Changes at or below trimmed_through may be missing: written before the outbox existed, or trimmed.
                -- A reader asking for changes after an older version gets a full snapshot (ReasonCode 1) instead.
                CREATE TABLE IF NOT EXISTS {{state}} (
                    singleton        boolean  PRIMARY KEY DEFAULT true CHECK (singleton),
                    trimmed_through  bigint   NOT NULL
                );
                """)
                .with("outbox", names.outbox().quoted())
                .with("key_columns", String.join(",\n" + " ".repeat(7), keyColumns))
                .with("table", names.table().quoted())
                .with("outbox_literal", PgName.literal(names.outbox().quoted()))
                .with("pkey_literal", PgName.literal(names.primaryKey()))
                .with("not_null", String.join(",\n" + " ".repeat(12), notNull))
                .with("pkey", PgName.quote(names.primaryKey()))
                .with("outbox_comment", PgName.literal("Keys of the rows of " + names.table() + " changed, captured by"
                        + " Tidemark. Read the changes with " + names.changeFunction() + "(json); trim them with "
                        + names.trimFunction() + "(bigint, integer)."))
                .with("key_comments", String.join("\n", keyComments))
                .with("state", names.state().quoted())
                .render();
    }

    private String keysCaptureFunction() {
        return captureFunction(new CaptureParts("""
                -- Runs once per writing statement, so every write pays for it. It records keys only and renders no
                -- JSON, so of the settings a SET clause would pin (each saves and restores its setting on every
                -- call) it keeps one: extra_float_digits, without which a session at a negative value compares two
                -- different floats as the same text and misses an update. No SET search_path: every function,
                -- operator, type and cast below is schema-qualified instead, so no search_path of the caller, not
                -- even one listing a schema ahead of pg_catalog, changes what it runs; the transition tables
                -- (inserted, old_rows, ...) are found before any table of those names.\
                """,
                "SET extra_float_digits = 1",
                "The key of every inserted row, with one INSERT per statement.",
                keysRowsCapture("I", "inserted"),
                SqlTemplate.of("""
                                INSERT INTO {{outbox}} (version, xact_id, operation, changed, {{outbox_keys}})
                                SELECT v.version, v.xact_id, k.operation,
                                       CASE WHEN k.operation OPERATOR(pg_catalog.=) 'U' THEN ch.changed END,
                                       {{pair_keys}}\
                        """)
                        .with("outbox", names.outbox().quoted())
                        .with("outbox_keys", outboxKeyColumns(""))
                        .with("pair_keys", shape.key().stream()
                                .map(k -> SqlTemplate.of("COALESCE(n.{{column}}, o.{{column}})")
                                        .with("column", k.quotedName()).render())
                                .collect(Collectors.joining(",\n" + " ".repeat(15))))
                        .render(),
                "",
                keysRowsCapture("D", "deleted"),
                truncateBranch(source -> keysRowsCapture("D", source)),
                "Tidemark: captures the keys of changed rows of " + names.table() + " into " + names.outbox() + "."));
    }

    /** {@link #rowsCapture} for KEYS: the key of every row of {@code source}. */
    private String keysRowsCapture(String operation, String source) {
        return SqlTemplate.of("""
                        INSERT INTO {{outbox}} (version, xact_id, operation, {{outbox_keys}})
                        SELECT v.version, v.xact_id, '{{operation}}', {{keys}}
                          FROM (SELECT pg_catalog.pg_current_xact_id() AS xact_id,
                                       {{version}} AS version) AS v,
                               {{source}} AS r;
                        IF FOUND THEN
                            {{notify}}
                        END IF;\
                """)
                .with("outbox", names.outbox().quoted())
                .with("outbox_keys", outboxKeyColumns(""))
                .with("operation", operation)
                .with("keys", shape.key().stream().map(k -> "r." + k.quotedName()).collect(Collectors.joining(", ")))
                .with("version", VERSION_EXPRESSION)
                .with("source", source)
                .with("notify", notifyStatement())
                .render();
    }

    /**
     * The diff branch's rows for KEYS: the outbox page grouped by key, joined to the table by key, one element per
     * key (see the comment it renders).
     */
    private String keysDiffRows() {
        List<OutboxColumn> nonKey = shape.nonKeyColumns();
        List<String> changedFlags = new ArrayList<>();
        List<String> changedCases = new ArrayList<>();
        for (int i = 0; i < nonKey.size(); i++) {
            String literal = PgName.literal(nonKey.get(i).payloadKey());
            changedFlags.add(SqlTemplate.of("bool_or(o.operation <> 'U' OR {{key}} = ANY (o.changed)) AS changed_{{n}}")
                    .with("key", literal).with("n", i + 1).render());
            changedCases.add(SqlTemplate.of("CASE WHEN p.changed_{{n}} THEN {{key}} END")
                    .with("n", i + 1).with("key", literal).render());
        }
        String changed = nonKey.isEmpty() ? "'{}'::text[]"
                : "array_remove(ARRAY[" + String.join(",\n" + " ".repeat(56), changedCases) + "], NULL)";
        List<String> deleteKeys = new ArrayList<>();
        List<String> join = new ArrayList<>();
        for (int i = 0; i < shape.key().size(); i++) {
            OutboxColumn k = shape.key().get(i);
            deleteKeys.add("p." + keyColumn(i + 1) + " AS " + k.quotedKey());
            join.add("t." + k.quotedName() + " = p." + keyColumn(i + 1));
            join.add("t." + k.quotedName() + "::text = p." + keyColumn(i + 1) + "::text");
        }
        return SqlTemplate.of("""
                           -- Keys only: one element per key changed in the page, ordered by its FIRST change.
                           'Data', COALESCE(json_agg(x.change ORDER BY x.version, x.id), '[]'::json))
                  FROM (
                    -- The net change of a key over the page, from the row as this statement's snapshot holds
                    -- it: present and first recorded as an insert (absent before the page): an insert;
                    -- present otherwise: an update, whose $changed lists the columns an update of the page
                    -- changed, or every column if the row was deleted or inserted in between; absent: a
                    -- delete, even of a key first inserted in the page: an earlier read may have delivered
                    -- that insert early (its row newer than its page), and the reader then holds the row.
                    -- Why a row read now cannot break the order: the snapshot holds only committed rows, and
                    -- a committed change the page does not hold (a version at or above its end) has a higher
                    -- version than every change in it, so the next page delivers that key again, with a
                    -- state at least as new. A reader may see a newer state early, never an older one late.
                    -- Why $version is the key's FIRST version in the page: a reader may store a position
                    -- between two elements (its destinations took the first ones). Every change at or below
                    -- that position then belongs to a key already delivered, and the key's later changes are
                    -- read again from there. With the last version instead, an insert folded into a key whose
                    -- element comes after the position would come back as an update of a row never sent.
                    -- Keys are grouped and joined by value AND text: a key type whose equality is coarser
                    -- than its text (numeric 1.0 = 1.00) keeps the delete of the old text and the insert of
                    -- the new one, as the capture recorded them (deletes first).
                    SELECT p.version, p.id,
                           CASE WHEN t.{{first_key}} IS NULL
                                THEN (SELECT row_to_json(c)
                                        FROM (SELECT 'D' AS "$operation",
                                                     p.version AS "$version",
                                                     {{delete_keys}}) AS c)
                                WHEN p.first_operation = 'I'
                                THEN (SELECT row_to_json(c)
                                        FROM (SELECT 'I' AS "$operation",
                                                     p.version AS "$version",
                                                     {{columns_i}}) AS c)
                                ELSE (SELECT row_to_json(c)
                                        FROM (SELECT 'U' AS "$operation",
                                                     p.version AS "$version",
                                                     {{changed}} AS "$changed",
                                                     {{columns_u}}) AS c)
                           END AS change
                      FROM (SELECT {{outbox_keys}},
                                   min(o.version) AS version,
                                   min(o.id) AS id,
                                   (array_agg(o.operation ORDER BY o.version, o.id))[1] AS first_operation{{changed_flags}}
                              FROM {{outbox}} AS o
                             WHERE o.version > from_version AND o.version <= page_end
                             GROUP BY {{outbox_keys}}, {{outbox_key_texts}}) AS p
                      LEFT JOIN ONLY {{table}} AS t ON {{join}}) AS x\
                """)
                .with("first_key", shape.key().get(0).quotedName())
                .with("delete_keys", String.join(",\n" + " ".repeat(37), deleteKeys))
                .with("columns_i", projection(shape.columns(), "t", 37))
                .with("changed", changed)
                .with("columns_u", projection(shape.columns(), "t", 37))
                .with("outbox_keys", outboxKeyColumns("o"))
                .with("outbox_key_texts", IntStream.rangeClosed(1, shape.key().size())
                        .mapToObj(i -> "o." + keyColumn(i) + "::text").collect(Collectors.joining(", ")))
                .with("changed_flags", changedFlags.isEmpty() ? ""
                        : ",\n" + " ".repeat(19) + String.join(",\n" + " ".repeat(19), changedFlags))
                .with("outbox", names.outbox().quoted())
                .with("table", names.table().quoted())
                .with("join", String.join(" AND ", join))
                .render().replaceFirst("^ +", "");
    }

    private String triggers() {
        return SqlTemplate.of("""
                -- Triggers: CREATE TRIGGER waits for the writers of {{table_text}} to finish, so once they exist
                -- every later change is captured. All are statement triggers over transition tables: one INSERT
                -- into the outbox per statement (measured: see benchmarks/README-outbox.md).
                {{insert_trigger}}
                {{update_trigger}}
                {{delete_trigger}}
                CREATE OR REPLACE TRIGGER {{truncate}}
                    BEFORE TRUNCATE ON {{table}}
                    FOR EACH STATEMENT EXECUTE FUNCTION {{capture}}();

                -- The captured columns, as a view: dropping one of them, or changing its type, now fails with a
                -- message naming this view, instead of succeeding and making every write to the table fail. Re-run
                -- this script for the new shape in the same migration (see the README).
                DROP VIEW IF EXISTS {{guard}};
                CREATE VIEW {{guard}} AS
                    SELECT {{guard_columns}}
                      FROM ONLY {{table}} AS t
                     WHERE false;
                COMMENT ON VIEW {{guard}} IS {{guard_comment}};
                """)
                .with("table_text", comment(names.table().toString()))
                .with("table", names.table().quoted())
                .with("capture", names.captureFunction().quoted())
                .with("insert_trigger", transitionTableTrigger(names.insertTrigger(), "INSERT", "NEW TABLE AS inserted"))
                .with("update_trigger", transitionTableTrigger(names.updateTrigger(), "UPDATE",
                        "OLD TABLE AS old_rows NEW TABLE AS new_rows"))
                .with("delete_trigger", transitionTableTrigger(names.deleteTrigger(), "DELETE", "OLD TABLE AS deleted"))
                .with("truncate", PgName.quote(names.truncateTrigger()))
                .with("guard", names.guardView().quoted())
                .with("guard_columns", shape.columns().stream().map(c -> "t." + c.quotedName())
                        .collect(Collectors.joining(",\n" + " ".repeat(11))))
                .with("guard_comment", PgName.literal("Tidemark: the columns " + names.outbox()
                        + " captures from " + names.table() + ". Keeps them from being dropped while captured."))
                .render();
    }

    /** One of the row-change triggers: after {@code event}, once per statement, with its transition tables. */
    private String transitionTableTrigger(String trigger, String event, String transitionTables) {
        return SqlTemplate.of("""
                CREATE OR REPLACE TRIGGER {{trigger}}
                    AFTER {{event}} ON {{table}}
                    REFERENCING {{transition_tables}}
                    FOR EACH STATEMENT EXECUTE FUNCTION {{capture}}();""")
                .with("trigger", PgName.quote(trigger))
                .with("event", event)
                .with("table", names.table().quoted())
                .with("transition_tables", transitionTables)
                .with("capture", names.captureFunction().quoted())
                .render();
    }

    private String historyStart() {
        return SqlTemplate.of("""
                -- 4. Where the history starts -------------------------------------------------------------------------
                -- Runs after CREATE TRIGGER, in a fresh READ COMMITTED snapshot: every writer that changed the table
                -- unobserved has finished. A reader with an older fromVersion (not issued by this outbox) gets a full
                -- snapshot rather than an incomplete diff. Kept as it is when the script runs again.
                INSERT INTO {{state}} (singleton, trimmed_through)
                VALUES (true, pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1)
                ON CONFLICT (singleton) DO NOTHING;
                """)
                .with("state", names.state().quoted())
                .render();
    }

    private String changeFunction() {
        return SqlTemplate.of("""
                -- 5. The change function --------------------------------------------------------------------------------
                -- Request:  {"fromVersion": N, "mode": "sync" | "seed", "maxRows": M}
                -- Response: {"Metadata": {"Sync": {"Version", "Type", "ReasonCode"},
                --                         "Outbox": {"Horizon", "HeldBack", "Arm" (wake-ups on)}},
                --            "Data": [changes]}
                -- PL/pgSQL and STABLE: every statement of a STABLE function reads the snapshot of the query that
                -- called it, so the horizon, the trim state and the changes all come from one moment; and PL/pgSQL
                -- plans each statement once per session and keeps the plan. (An SQL function with SET clauses is
                -- never inlined, and before PostgreSQL 18 its body is planned again on every call, which was most of
                -- what a read that found nothing cost.) The request is checked and answered in this one function:
                -- a nested call, with its own SET clause, cost a fifth of a read that found nothing.
                CREATE OR REPLACE FUNCTION {{function}}(payload json)
                RETURNS json
                LANGUAGE plpgsql
                STABLE
                {{settings}}
                AS $changes$
                DECLARE
                    sync_mode     text    := COALESCE(payload ->> 'mode', 'sync');
                    max_rows      integer := (payload ->> 'maxRows')::integer;
                    from_version  bigint  := COALESCE((payload ->> 'fromVersion')::bigint, 0);
                    -- Every transaction below the horizon has finished; versions below it are final.
                    horizon       bigint  := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
                    trimmed       bigint;
                    page_end      bigint;
                    answer        json;
                BEGIN
                    IF sync_mode NOT IN ('sync', 'seed') THEN
                        RAISE EXCEPTION 'mode must be "sync" or "seed", got %', sync_mode
                            USING ERRCODE = 'invalid_parameter_value';
                    END IF;
                    IF max_rows < 1 THEN
                        RAISE EXCEPTION 'maxRows must be at least 1, got %', max_rows
                            USING ERRCODE = 'invalid_parameter_value';
                    END IF;

                    -- Seed: no rows, and a version from which nothing is missed (every later change is at or above
                    -- the horizon).
                    IF sync_mode = 'seed' THEN
                        RETURN json_build_object(
                                   'Metadata', json_build_object('Sync', json_build_object(
                                       'Version', horizon - 1, 'Type', 'Diff', 'ReasonCode', 0)),
                                   'Data', '[]'::json);
                    END IF;

                    IF from_version >= horizon THEN
                        RAISE EXCEPTION 'fromVersion % is not a version of %: the oldest running transaction is %',
                            from_version, {{outbox_text}}, horizon
                            USING ERRCODE = 'invalid_parameter_value',
                                  HINT = 'The watermark comes from elsewhere (another database, a restored or failed-over'
                                         ' server whose transaction ids went back). Reset the tracked object.';
                    END IF;

                    -- Full snapshot: a first full sync (fromVersion 0), or a reader older than what the outbox still
                    -- holds (ReasonCode 1): every row of the table, in key order. Its rows carry no $version: the
                    -- watermark becomes horizon - 1, and changes of transactions still running are delivered after it.
                    SELECT s.trimmed_through INTO trimmed FROM {{state}} AS s;
                    IF from_version = 0 OR from_version < trimmed THEN
                        SELECT json_build_object(
                                   'Metadata', json_build_object('Sync', json_build_object(
                                       'Version', horizon - 1, 'Type', 'Full',
                                       'ReasonCode', CASE WHEN from_version = 0 THEN 0 ELSE 1 END)),
                                   'Data', COALESCE(json_agg(row_to_json(c) ORDER BY {{table_key_order}}), '[]'::json))
                          FROM ONLY {{table}} AS t,
                               LATERAL (SELECT {{full_columns}}) AS c
                          INTO answer;
                        RETURN answer;
                    END IF;

                    -- maxRows: a page holds whole versions only, so the watermark never lands inside a transaction.
                    -- It ends with the version of the maxRows-th pending change: at least maxRows changes while
                    -- more are pending (the engine keeps polling at once while pages come back full), more by the
                    -- rest of that version's transaction.
                    IF max_rows IS NOT NULL THEN
                        SELECT o.version INTO page_end
                          FROM {{outbox}} AS o
                         WHERE o.version > from_version AND o.version < horizon
                         ORDER BY o.version, o.id
                        OFFSET max_rows - 1 LIMIT 1;
                    END IF;
                    -- Fewer than maxRows pending, or no maxRows: everything below the horizon, up to horizon - 1.
                    page_end := COALESCE(page_end, horizon - 1);

                    -- Diff: the changes after fromVersion, up to the end of the page. The page's bounds are
                    -- parameters of the cached plan, which reads the primary key's range whatever they are. The
                    -- aggregate sits at the top level (in a scalar subquery the whole answer would be copied once
                    -- more); changes are aggregated in primary-key order, which the aggregate's ORDER BY uses without
                    -- sorting on PostgreSQL 16 and later.
                    SELECT json_build_object(
                               'Metadata', json_build_object(
                                   'Sync', json_build_object('Version', page_end, 'Type', 'Diff', 'ReasonCode', 0),
                                   -- Diagnostics: do committed changes wait for an older transaction to end?
                                   -- (max reads the end of the index; EXISTS may be planned as a heap scan.)
                                   'Outbox', json_build_object('Horizon', horizon, 'HeldBack',
                                       COALESCE((SELECT max(h.version) FROM {{outbox}} AS h) >= horizon, false){{arm_hint}})),
                               {{diff_rows}}
                      INTO answer;
                    RETURN answer;
                END
                $changes$;
                COMMENT ON FUNCTION {{function}}(json) IS {{function_comment}};
                -- Earlier versions checked the request in a function of its own.
                DROP FUNCTION IF EXISTS {{request}}(json);
                """)
                .with("request", names.requestFunction().quoted())
                .with("function", names.changeFunction().quoted())
                .with("settings", PINNED_SETTINGS)
                .with("outbox_text", PgName.literal(names.outbox().toString()))
                .with("state", names.state().quoted())
                .with("table", names.table().quoted())
                .with("table_key_order", shape.key().stream().map(k -> "t." + k.quotedName())
                        .collect(Collectors.joining(", ")))
                .with("full_columns", projection(shape.columns(), "t", 31))
                .with("outbox", names.outbox().quoted())
                .with("diff_rows", (capture == CaptureShape.KEYS ? keysDiffRows() : SqlTemplate.of("""
                                   'Data', COALESCE(json_agg(o.change ORDER BY o.version, o.id), '[]'::json))
                          FROM {{outbox}} AS o
                         WHERE o.version > from_version AND o.version <= page_end\
                        """).with("outbox", names.outbox().quoted()).render().replaceFirst("^ +", ""))
                        .replace("\n", "\n    ")) // the statement sits in the function's BEGIN block
                .with("arm_hint", channel == null ? "" : SqlTemplate.of(",\n"
                        + "                       -- Wake-up: the function a reader calls before it waits (section 2b).\n"
                        + "                       'Arm', {{arm}}")
                        .with("arm", PgName.literal(FunctionNames.text(names.armFunction()))).render())
                .with("function_comment", PgName.literal("Tidemark change function of " + names.table()
                        + ", reading " + names.outbox() + "."))
                .render();
    }

    private String trimFunction() {
        return SqlTemplate.of("""
                -- 6. Trimming --------------------------------------------------------------------------------------------
                -- Deletes up to about max_rows delivered changes (whole versions) at or below through_version, never
                -- at or above the horizon, and records how far the outbox was trimmed in the same transaction.
                -- Returns the number of changes deleted: call it until it returns 0, one transaction per call.
                -- PostgresOutbox.trim computes through_version from the stored watermarks of every reader.
                CREATE OR REPLACE FUNCTION {{trim}}(through_version bigint, max_rows integer)
                RETURNS bigint
                LANGUAGE plpgsql
                SET search_path = pg_catalog, pg_temp
                AS $trim$
                DECLARE
                    horizon    bigint := pg_snapshot_xmin(pg_current_snapshot())::text::bigint;
                    batch_end  bigint;
                    deleted    bigint;
                    deleted_to bigint;
                BEGIN
                    IF max_rows IS NULL OR max_rows < 1 THEN
                        RAISE EXCEPTION 'max_rows must be at least 1, got %', max_rows
                            USING ERRCODE = 'invalid_parameter_value';
                    END IF;
                    through_version := LEAST(through_version, horizon - 1);
                    SELECT o.version INTO batch_end
                      FROM {{outbox}} AS o
                     WHERE o.version <= through_version
                     ORDER BY o.version, o.id
                    OFFSET max_rows - 1 LIMIT 1;
                    batch_end := COALESCE(batch_end, through_version);

                    WITH gone AS (
                        DELETE FROM {{outbox}} AS o WHERE o.version <= batch_end RETURNING o.version)
                    SELECT count(*), max(gone.version) INTO deleted, deleted_to FROM gone;

                    IF deleted > 0 THEN
                        UPDATE {{state}} AS s
                           SET trimmed_through = GREATEST(s.trimmed_through, deleted_to);
                    END IF;
                    RETURN deleted;
                END
                $trim$;
                REVOKE ALL ON FUNCTION {{trim}}(bigint, integer) FROM PUBLIC;
                COMMENT ON FUNCTION {{trim}}(bigint, integer) IS {{trim_comment}};
                """)
                .with("trim", names.trimFunction().quoted())
                .with("outbox", names.outbox().quoted())
                .with("state", names.state().quoted())
                .with("trim_comment", PgName.literal("Tidemark: deletes delivered changes from " + names.outbox()
                        + "."))
                .render();
    }

    /** The notification payload: the change function, as tracked objects name it. */
    private String notifyPayload() {
        return PgName.literal(FunctionNames.text(names.changeFunction()));
    }

    /**
     * The wake-up of a capturing statement, at the indentation of the capture's {@code IF FOUND} branches (see
     * {@link #wakeUpSection}): a notification only while a reader waits for one, and only from the writer that
     * disarms the flag, so that writers do not queue on NOTIFY's commit-time lock. Writers at REPEATABLE READ or
     * SERIALIZABLE would read a stale flag (and locking it could fail them with a serialization error): they
     * notify every time, as every writer did before.
     */
    private String notifyStatement() {
        if (channel == null) {
            return "NULL; -- notifications are off";
        }
        return SqlTemplate.of("""
                -- Wake-up (section 2b): notify only when a reader waits, from the writer that disarms the flag.
                            IF pg_catalog.current_setting('transaction_isolation')
                                   OPERATOR(pg_catalog.=) ANY (ARRAY['repeatable read', 'serializable']) THEN
                                {{notify}}
                            ELSIF EXISTS (SELECT FROM {{wakeup}} AS w WHERE w.armed) THEN
                                -- A writer that cannot take the lock leaves the notification to the one holding it.
                                IF pg_catalog.pg_try_advisory_xact_lock({{lock_key}}) THEN
                                    UPDATE {{wakeup}} AS w SET armed = false WHERE w.armed;
                                    {{notify}}
                                END IF;
                            END IF;""")
                .with("notify", SqlTemplate.of("PERFORM pg_catalog.pg_notify({{channel}}, {{payload}});")
                        .with("channel", PgName.literal(channel)).with("payload", notifyPayload()).render())
                .with("wakeup", names.wakeUp().quoted())
                .with("lock_key", disarmLockKey())
                .render();
    }

    /** The advisory lock the writer that disarms the flag holds until it ends. */
    private String disarmLockKey() {
        return SqlTemplate.of("pg_catalog.hashtextextended({{key}}, 0)")
                .with("key", PgName.literal("tidemark wake-up " + names.outbox())).render();
    }

    /**
     * Section 2b: the wake-up flag and the function that arms it, or, with notifications off, nothing (an earlier
     * install's flag is dropped, so that {@code notifications(false)} leaves no object the capture no longer uses).
     */
    private String wakeUpSection() {
        if (channel == null) {
            return SqlTemplate.of("""
                    -- 2b. Wake-up ------------------------------------------------------------------------------------------
                    -- Notifications are off: readers find changes at their poll interval. Nothing of an earlier
                    -- install's wake-up flag stays.
                    DROP FUNCTION IF EXISTS {{arm}}();
                    DROP TABLE IF EXISTS {{wakeup}};
                    """)
                    .with("arm", names.armFunction().quoted())
                    .with("wakeup", names.wakeUp().quoted())
                    .render();
        }
        return SqlTemplate.of("""
                -- 2b. Wake-up ------------------------------------------------------------------------------------------
                -- NOTIFY takes a database-wide lock while a notifying transaction commits, so writers that all
                -- notified would commit one at a time. Instead the capture notifies only while a reader waits:
                --   * a reader sets the flag, {{wakeup_text}}.armed, through {{arm_text}}()
                --     when a read left nothing below its horizon unread, before it waits;
                --   * the first capturing writer at READ COMMITTED that finds it set takes a transaction-level
                --     advisory lock without waiting, clears it and notifies on commit. A writer that finds the lock
                --     taken does nothing: the holder notifies when it commits, or, if it rolls back, its clearing
                --     rolls back too and the next capturing writer notifies. Every other write reads the one-row
                --     flag and goes on;
                --   * writers at REPEATABLE READ or SERIALIZABLE notify every time (their snapshot may hold a
                --     stale flag); READ UNCOMMITTED is READ COMMITTED in PostgreSQL and is treated as such.
                -- The gap: a writer that read the flag before the reader set it does not notify, and may commit
                -- after the reader's read. So after arming, the reader reads the snapshot's xmax X (every
                -- transaction that read the flag before it was set has an id below X) and keeps reading at a short,
                -- growing interval until a read's horizon (pg_snapshot_xmin) reaches X: every such writer has then
                -- ended and been read. Only then does it wait for a notification alone; its poll interval stays the
                -- safety net. A rolled-back writer that held the lock while another captured is the one case left
                -- to the next capturing write or the poll interval.
                CREATE TABLE IF NOT EXISTS {{wakeup}} (
                    singleton  boolean  PRIMARY KEY DEFAULT true CHECK (singleton),
                    armed      boolean  NOT NULL
                );
                COMMENT ON TABLE {{wakeup}} IS {{wakeup_comment}};
                INSERT INTO {{wakeup}} (singleton, armed) VALUES (true, true)
                ON CONFLICT (singleton) DO NOTHING;

                -- Arms the flag. Readers call it (PostgresProvider does) with no privilege on the flag. It never waits
                -- for a writer: a writer locks the row only to clear a set flag, and a set flag is left as it is.
                -- A flag row deleted by hand (or lost in a data-only copy) is put back, else no writer would notify.
                CREATE OR REPLACE FUNCTION {{arm}}()
                RETURNS void
                LANGUAGE sql
                SECURITY DEFINER
                SET search_path = pg_catalog, pg_temp
                AS $arm$
                UPDATE {{wakeup}} AS w SET armed = true WHERE NOT w.armed;
                INSERT INTO {{wakeup}} (singleton, armed)
                SELECT true, true WHERE NOT EXISTS (SELECT FROM {{wakeup}})
                ON CONFLICT (singleton) DO NOTHING;
                $arm$;
                COMMENT ON FUNCTION {{arm}}() IS {{arm_comment}};
                """)
                .with("wakeup_text", comment(names.wakeUp().toString()))
                .with("arm_text", comment(names.armFunction().toString()))
                .with("wakeup", names.wakeUp().quoted())
                .with("wakeup_comment", PgName.literal("Tidemark: whether a reader of " + names.outbox()
                        + " waits for a notification; set by " + names.armFunction() + "(), cleared by the"
                        + " capture that notifies."))
                .with("arm", names.armFunction().quoted())
                .with("arm_comment", PgName.literal("Tidemark: a reader of " + names.outbox() + " waits for a"
                        + " notification; the next capturing writer notifies."))
                .render();
    }

    /**
     * {@code r."col" AS "key"} items, one per line: the first at the placeholder's position, the others indented
     * by {@code indent} spaces to line up under it.
     */
    private static String projection(List<OutboxColumn> columns, String row, int indent) {
        return columns.stream()
                .map(c -> SqlTemplate.of("{{row}}.{{column}} AS {{key}}")
                        .with("row", row).with("column", c.quotedName()).with("key", c.quotedKey()).render())
                .collect(Collectors.joining(",\n" + " ".repeat(indent)));
    }

    /**
     * {@code $changed}: the payload keys of the non-key columns whose text form changed, in payload order
     * (one {@code CASE} per column; an update reaching this code changed at least one of them). Equal or both NULL
     * is spelled out with a qualified {@code =}: {@code IS DISTINCT FROM} would resolve its {@code =} through the
     * caller's search_path and has no qualified form.
     */
    private static String changedNames(List<OutboxColumn> columns, int indent) {
        if (columns.isEmpty()) {
            return "'{}'::pg_catalog.text[]";
        }
        String pad = " ".repeat(indent);
        String cases = columns.stream()
                .map(c -> SqlTemplate.of("""
                                {{pad}}    CASE WHEN COALESCE((o.{{column}})::pg_catalog.text OPERATOR(pg_catalog.=) (n.{{column}})::pg_catalog.text,
                                {{pad}}                  (o.{{column}})::pg_catalog.text IS NULL AND (n.{{column}})::pg_catalog.text IS NULL)
                                {{pad}}         THEN NULL ELSE {{key}} END""")
                        .with("pad", pad).with("column", c.quotedName()).with("key", PgName.literal(c.payloadKey()))
                        .render())
                .collect(Collectors.joining(",\n"));
        return SqlTemplate.of("""
                pg_catalog.array_remove(ARRAY[
                {{cases}}
                {{pad}}], NULL)""").with("cases", cases).with("pad", pad).render();
    }

    private static String literals(List<OutboxColumn> columns, Function<OutboxColumn, String> part) {
        return columns.stream().map(c -> PgName.literal(part.apply(c))).collect(Collectors.joining(", "));
    }

    /**
     * Text for a {@code --} comment. Quoted identifiers read from the catalog may hold a line break, which would
     * end the comment and turn the rest of the name into SQL.
     */
    static String comment(String text) {
        return text.codePoints().mapToObj(c -> Character.isISOControl(c) ? "?" : Character.toString(c))
                .collect(Collectors.joining());
    }

    private static String columnList(List<OutboxColumn> columns) {
        return columns.stream().map(OutboxColumn::toString).collect(Collectors.joining(", "));
    }
}
