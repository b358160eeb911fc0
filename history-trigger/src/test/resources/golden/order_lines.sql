-- Tidemark temporal history for Sales.Order Lines
--
-- History table: Sales.Order Lines_history
-- Versioned columns: Order, line, amount, noted_at
-- Primary key: Order, line
-- Excluded columns: none
-- Change context settings: sales_audit.changed_by, .changed_by_name, .correlation_id, .reason, .extra
--
-- Run as ONE transaction (Flyway and Liquibase do; with psql use --single-transaction),
-- as the role that owns the table and has CREATE on its schema. No superuser is needed.
-- Generated: do not edit. TemporalTable.verify() reports any difference as drift.

-- Tidemark's registry of temporal tables: one row per temporal table, with its options,
-- versioned columns, the hash of its generated function (verify() reports drift against it) and the
-- retention horizon. Created by the first installation (CREATE on the database, once); later ones
-- need only USAGE on the schema and SELECT, INSERT, UPDATE, DELETE on the table.
DO $tidemark$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'tidemark') THEN
        CREATE SCHEMA "tidemark";
    END IF;
    IF pg_catalog.to_regclass('"tidemark"."temporal_tables"') IS NULL THEN
        CREATE TABLE "tidemark"."temporal_tables" (
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
$tidemark$;

-- Keep writers out until the trigger is in place, so no change slips between the seed and
-- the trigger. Readers are not blocked.
LOCK TABLE "Sales"."Order Lines" IN SHARE ROW EXCLUSIVE MODE;

-- History of Sales.Order Lines: one row per version, plus a tombstone per delete.
-- Every versioned column keeps its exact type; all are nullable and no constraint of the table is
-- copied, so history can hold any past value. operation: 1 insert, 2 update, 3 delete.
-- chain_no: which life of the key a row belongs to (1 from the first insert, +1 after each delete).
CREATE TABLE "Sales"."Order Lines_history" (
    history_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "Order" integer,
    "line" smallint,
    "amount" numeric(10,2)[],
    "noted_at" timestamp(3) with time zone,
    valid_from      timestamptz NOT NULL,
    valid_to        timestamptz NOT NULL DEFAULT 'infinity',
    operation       smallint    NOT NULL CHECK (operation IN (1, 2, 3)),
    chain_no        integer     NOT NULL,
    changed_by      text,
    changed_by_name text,
    correlation_id  text,
    reason          text,
    extra           jsonb,
    db_session_user text DEFAULT session_user,
    transaction_id xid8 DEFAULT pg_catalog.pg_current_xact_id(),
    CHECK (valid_from <= valid_to)
);

-- Every existing row becomes an open version (operation 1), dated from column noted_at.
INSERT INTO "Sales"."Order Lines_history" ("Order", "line", "amount", "noted_at", valid_from, valid_to, operation, chain_no)
SELECT t."Order", t."line", t."amount", t."noted_at", COALESCE(t."noted_at"::timestamptz, pg_catalog.now()), 'infinity', 1, 1
  FROM "Sales"."Order Lines" AS t;

-- Versions of one key, newest first: the trigger's lookups and as-of queries for one key.
-- valid_to DESC breaks the tie between a tombstone and a re-insert that starts at the same instant.
CREATE INDEX IF NOT EXISTS "Order Lines_history_key_idx" ON "Sales"."Order Lines_history" ("Order", "line", valid_from DESC, valid_to DESC);

-- At most one open version per key, enforced by the database itself.
CREATE UNIQUE INDEX IF NOT EXISTS "Order Lines_history_open_uq" ON "Sales"."Order Lines_history" ("Order", "line") WHERE valid_to = 'infinity';

-- One start per life of a key: two transactions that cannot see each other's history (REPEATABLE
-- READ) cannot both start the same chain; the later one fails with a serialization error instead.
CREATE UNIQUE INDEX IF NOT EXISTS "Order Lines_history_chain_uq" ON "Sales"."Order Lines_history" ("Order", "line", chain_no) WHERE operation = 1;

-- The row triggers' function. SECURITY DEFINER: it writes history as its owner, so the application
-- role needs no privilege on the history table and cannot forge or rewrite it. Every relation,
-- type, function and operator is named with its schema, so the caller's search_path (which this
-- function does not SET: the clause is paid on every call) cannot substitute an object of its
-- own; PostgreSQL never looks up functions or operators in pg_temp.
CREATE OR REPLACE FUNCTION "Sales"."Order Lines_history_write"()
    RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
AS $tidemark$
DECLARE
    -- Change context: transaction-local settings pushed by the application; '' means absent.
    -- (NULLIF would resolve its = through the caller's search_path, so the test is spelled out.)
    _now             pg_catalog.timestamptz := pg_catalog.now();
    _changed_by      pg_catalog.text  := CASE WHEN pg_catalog.current_setting('sales_audit.changed_by', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('sales_audit.changed_by', true) END;
    _changed_by_name pg_catalog.text  := CASE WHEN pg_catalog.current_setting('sales_audit.changed_by_name', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('sales_audit.changed_by_name', true) END;
    _correlation_id  pg_catalog.text  := CASE WHEN pg_catalog.current_setting('sales_audit.correlation_id', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('sales_audit.correlation_id', true) END;
    _reason          pg_catalog.text  := CASE WHEN pg_catalog.current_setting('sales_audit.reason', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('sales_audit.reason', true) END;
    _extra           pg_catalog.jsonb := (CASE WHEN pg_catalog.current_setting('sales_audit.extra', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('sales_audit.extra', true) END)::pg_catalog.jsonb;
    _last_to         pg_catalog.timestamptz;
BEGIN
    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) 'Sales' OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) 'Order Lines' THEN
        RAISE EXCEPTION 'tidemark: % was generated for Sales.Order Lines, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
    END IF;

    -- Each event is one statement on history (a statement is most of a one-row trigger's cost).
    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN
        IF NEW."Order" OPERATOR(pg_catalog.=) OLD."Order" AND NEW."line" OPERATOR(pg_catalog.=) OLD."line" THEN
            -- No versioned column changed: write nothing. Columns without an equality operator
            -- (json, xml, point, ...) are compared as text, so they never break the update.
            -- Each column: equal, or both NULL (IS NOT DISTINCT FROM, which cannot be qualified).
            IF COALESCE(NEW."Order" OPERATOR(pg_catalog.=) OLD."Order", NEW."Order" IS NULL AND OLD."Order" IS NULL)
               AND COALESCE(NEW."line" OPERATOR(pg_catalog.=) OLD."line", NEW."line" IS NULL AND OLD."line" IS NULL)
               AND COALESCE(NEW."amount" OPERATOR(pg_catalog.=) OLD."amount", NEW."amount" IS NULL AND OLD."amount" IS NULL)
               AND COALESCE(NEW."noted_at" OPERATOR(pg_catalog.=) OLD."noted_at", NEW."noted_at" IS NULL AND OLD."noted_at" IS NULL) THEN
                RETURN NULL;
            END IF;
            -- Close the open version no earlier than 1 microsecond after it began (a transaction
            -- that started before the one that wrote it has an older now()), and open the next
            -- version exactly there, so the chain stays contiguous.
            WITH closed AS (
                UPDATE "Sales"."Order Lines_history" AS h
                   SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                 WHERE h."Order" OPERATOR(pg_catalog.=) OLD."Order" AND h."line" OPERATOR(pg_catalog.=) OLD."line" AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                RETURNING h.valid_to, h.chain_no
            )
            INSERT INTO "Sales"."Order Lines_history" ("Order", "line", "amount", "noted_at", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT NEW."Order", NEW."line", NEW."amount", NEW."noted_at", COALESCE(c.valid_to, _now), 'infinity', 2, COALESCE(c.chain_no, 1), _changed_by, _changed_by_name, _correlation_id, _reason, _extra
              FROM (VALUES (1)) AS one (x) LEFT JOIN closed AS c ON true;
            RETURN NULL;
        END IF;
        -- The primary key changed: the old key's chain ends with a tombstone and the new key's
        -- chain starts with an insert, as if the row had been deleted and inserted.
    END IF;

    IF TG_OP OPERATOR(pg_catalog.<>) 'INSERT' THEN
        -- DELETE (or the old key of a key update): close the open version and write a tombstone
        -- with the last values and an empty period at the closing instant.
        WITH closed AS (
            UPDATE "Sales"."Order Lines_history" AS h
               SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
             WHERE h."Order" OPERATOR(pg_catalog.=) OLD."Order" AND h."line" OPERATOR(pg_catalog.=) OLD."line" AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
            RETURNING h.valid_to, h.chain_no
        )
        INSERT INTO "Sales"."Order Lines_history" ("Order", "line", "amount", "noted_at", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
        SELECT OLD."Order", OLD."line", OLD."amount", OLD."noted_at", COALESCE(c.valid_to, _now), COALESCE(c.valid_to, _now), 3, COALESCE(c.chain_no, 1), _changed_by, _changed_by_name, _correlation_id, _reason, _extra
          FROM (VALUES (1)) AS one (x) LEFT JOIN closed AS c ON true;
        IF TG_OP OPERATOR(pg_catalog.=) 'DELETE' THEN
            RETURN NULL;
        END IF;
    END IF;

    -- INSERT (or the new key of a key update): start no earlier than the end of the key's last
    -- version, so a delete and re-insert (in this transaction, or by a transaction that began
    -- earlier but writes later) never overlaps the versions before it. FOR UPDATE makes a
    -- REPEATABLE READ writer that cannot see the latest version fail with a serialization error.
    -- Nothing is written when the last version is still open.
    INSERT INTO "Sales"."Order Lines_history" ("Order", "line", "amount", "noted_at", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
    SELECT NEW."Order", NEW."line", NEW."amount", NEW."noted_at", GREATEST(_now, l.valid_to), 'infinity', 1, COALESCE(l.chain_no, 0) OPERATOR(pg_catalog.+) 1, _changed_by, _changed_by_name, _correlation_id, _reason, _extra
      FROM (VALUES (1)) AS one (x)
      LEFT JOIN LATERAL (
            SELECT h.valid_to, h.chain_no
              FROM "Sales"."Order Lines_history" AS h
             WHERE h."Order" OPERATOR(pg_catalog.=) NEW."Order" AND h."line" OPERATOR(pg_catalog.=) NEW."line"
             ORDER BY h.valid_from DESC, h.valid_to DESC
             LIMIT 1
               FOR UPDATE) AS l ON true
     WHERE COALESCE(l.valid_to OPERATOR(pg_catalog.<>) 'infinity', true)
    ON CONFLICT ("Order", "line", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING;
    IF NOT FOUND THEN
        -- Rare: find out which of the two refusals it was.
        SELECT h.valid_to INTO _last_to
          FROM "Sales"."Order Lines_history" AS h
         WHERE h."Order" OPERATOR(pg_catalog.=) NEW."Order" AND h."line" OPERATOR(pg_catalog.=) NEW."line"
         ORDER BY h.valid_from DESC, h.valid_to DESC
         LIMIT 1;
        IF _last_to OPERATOR(pg_catalog.=) 'infinity' THEN
            RAISE EXCEPTION 'tidemark: history of %.% already has an open version for key %',
                  TG_TABLE_SCHEMA, TG_TABLE_NAME, (NEW."Order", NEW."line")::pg_catalog.text
                  USING ERRCODE = 'unique_violation',
                        HINT = 'History is out of step with the table (was the trigger disabled?); run TemporalTable.checkInvariants().';
        END IF;
        -- REPEATABLE READ raises this itself; READ COMMITTED gets here only if the other transaction
        -- committed while this one waited. Either way: retry the transaction.
        RAISE EXCEPTION 'tidemark: a concurrent transaction started the same history chain of %.% for key %',
              TG_TABLE_SCHEMA, TG_TABLE_NAME, (NEW."Order", NEW."line")::pg_catalog.text
              USING ERRCODE = 'serialization_failure';
    END IF;
    RETURN NULL;
END;
$tidemark$;

-- Nobody else may attach this SECURITY DEFINER function to a table of their own.
REVOKE ALL ON FUNCTION "Sales"."Order Lines_history_write"() FROM PUBLIC;

-- TRUNCATE fires no row trigger; this configuration refuses it.
CREATE OR REPLACE FUNCTION "Sales"."Order Lines_history_truncate"()
    RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
AS $tidemark$
BEGIN
    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) 'Sales' OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) 'Order Lines' THEN
        RAISE EXCEPTION 'tidemark: % was generated for Sales.Order Lines, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    RAISE EXCEPTION 'tidemark: TRUNCATE of %.% is refused because its history would lose track of the rows', TG_TABLE_SCHEMA, TG_TABLE_NAME
          USING ERRCODE = 'feature_not_supported',
                HINT = 'DELETE the rows instead (history records each one), or configure TruncatePolicy.CLOSE_VERSIONS.';
END;
$tidemark$;

-- Nobody else may attach this SECURITY DEFINER function to a table of their own.
REVOKE ALL ON FUNCTION "Sales"."Order Lines_history_truncate"() FROM PUBLIC;

-- Every row change of the table, whoever makes it, is recorded in the same statement.
CREATE OR REPLACE TRIGGER "Order Lines_history_trg"
    AFTER INSERT OR UPDATE OR DELETE ON "Sales"."Order Lines"
    FOR EACH ROW EXECUTE FUNCTION "Sales"."Order Lines_history_write"();

-- TRUNCATE policy: REFUSE.
CREATE OR REPLACE TRIGGER "Order Lines_history_truncate_trg"
    BEFORE TRUNCATE ON "Sales"."Order Lines"
    FOR EACH STATEMENT EXECUTE FUNCTION "Sales"."Order Lines_history_truncate"();

-- The table as it was at an instant, as its own row type, so point-in-time joins are plain
-- SQL: SELECT * FROM Sales.Order Lines_as_of('2024-01-01') AS p JOIN ... Runs with the caller's rights.
CREATE OR REPLACE FUNCTION "Sales"."Order Lines_as_of"(at timestamptz)
    RETURNS SETOF "Sales"."Order Lines"
    LANGUAGE plpgsql
    STABLE
    SET search_path = pg_catalog, pg_temp
AS $tidemark$
DECLARE
    _horizon timestamptz;
BEGIN
    -- Before the retention horizon, versions may have been pruned: refuse rather than answer wrong.
    SELECT r.pruned_before INTO _horizon
      FROM "tidemark"."temporal_tables" AS r
     WHERE r.source_schema = 'Sales' AND r.source_table = 'Order Lines';
    IF at < _horizon THEN
        RAISE EXCEPTION 'tidemark: history of Sales.Order Lines before % was pruned; ask for an instant at or after it', _horizon
              USING ERRCODE = 'data_exception';
    END IF;
    RETURN QUERY
    SELECT h."Order", h."line", h."amount", h."noted_at"
      FROM "Sales"."Order Lines_history" AS h
     WHERE tstzrange(h.valid_from, h.valid_to) @> at;
END;
$tidemark$;

-- Register the table, its versioned columns and the hash of its generated function.
INSERT INTO "tidemark"."temporal_tables" (source_schema, source_table, history_schema, history_table,
        key_columns, versioned_columns, orphan_columns, options, function_hash)
VALUES ('Sales', 'Order Lines', 'Sales', 'Order Lines_history',
        '["Order","line"]',
        '[{"name":"Order","type":"integer"},{"name":"line","type":"smallint"},{"name":"amount","type":"numeric(10,2)[]"},{"name":"noted_at","type":"timestamp(3) with time zone"}]',
        '[]',
        '{"settingsPrefix":"sales_audit","truncatePolicy":"REFUSE","triggerMode":"ROW","periodIndex":false,"sessionUserColumn":true,"transactionIdColumn":true,"excluded":[]}',
        '68d5c71e75a7eeab2b7203477867f10abbe5bae9bec25b5ffb0a8865ace3532c')
ON CONFLICT (source_schema, source_table) DO UPDATE
   SET key_columns = EXCLUDED.key_columns, versioned_columns = EXCLUDED.versioned_columns,
       orphan_columns = EXCLUDED.orphan_columns, options = EXCLUDED.options,
       function_hash = EXCLUDED.function_hash, evolved_at = pg_catalog.now();

