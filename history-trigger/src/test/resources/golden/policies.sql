-- Tidemark temporal history for public.policies
--
-- History table: public.policies_history
-- Versioned columns: id, number, premium, status, holder, tags, terms, location
-- Primary key: id
-- Excluded columns: document
-- Change context settings: tidemark.changed_by, .changed_by_name, .correlation_id, .reason, .extra
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
LOCK TABLE "public"."policies" IN SHARE ROW EXCLUSIVE MODE;

-- History of public.policies: one row per version, plus a tombstone per delete.
-- Every versioned column keeps its exact type; all are nullable and no constraint of the table is
-- copied, so history can hold any past value. operation: 1 insert, 2 update, 3 delete.
-- chain_no: which life of the key a row belongs to (1 from the first insert, +1 after each delete).
CREATE TABLE "public"."policies_history" (
    history_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "id" bigint,
    "number" character varying(20),
    "premium" public.money_amount,
    "status" public.policy_status,
    "holder" text COLLATE pg_catalog."C",
    "tags" text[],
    "terms" json,
    "location" point,
    valid_from      timestamptz NOT NULL,
    valid_to        timestamptz NOT NULL DEFAULT 'infinity',
    operation       smallint    NOT NULL CHECK (operation IN (1, 2, 3)),
    chain_no        integer     NOT NULL,
    changed_by      text,
    changed_by_name text,
    correlation_id  text,
    reason          text,
    extra           jsonb,
    CHECK (valid_from <= valid_to)
);

-- Every existing row becomes an open version (operation 1), dated at install time.
INSERT INTO "public"."policies_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no)
SELECT t."id", t."number", t."premium", t."status", t."holder", t."tags", t."terms", t."location", pg_catalog.now(), 'infinity', 1, 1
  FROM "public"."policies" AS t;

-- Versions of one key, newest first: the trigger's lookups and as-of queries for one key.
-- valid_to DESC breaks the tie between a tombstone and a re-insert that starts at the same instant.
CREATE INDEX IF NOT EXISTS "policies_history_key_idx" ON "public"."policies_history" ("id", valid_from DESC, valid_to DESC);

-- At most one open version per key, enforced by the database itself.
CREATE UNIQUE INDEX IF NOT EXISTS "policies_history_open_uq" ON "public"."policies_history" ("id") WHERE valid_to = 'infinity';

-- One start per life of a key: two transactions that cannot see each other's history (REPEATABLE
-- READ) cannot both start the same chain; the later one fails with a serialization error instead.
CREATE UNIQUE INDEX IF NOT EXISTS "policies_history_chain_uq" ON "public"."policies_history" ("id", chain_no) WHERE operation = 1;

-- The row triggers' function. SECURITY DEFINER: it writes history as its owner, so the application
-- role needs no privilege on the history table and cannot forge or rewrite it. Every relation,
-- type, function and operator is named with its schema, so the caller's search_path (which this
-- function does not SET: the clause is paid on every call) cannot substitute an object of its
-- own; PostgreSQL never looks up functions or operators in pg_temp.
CREATE OR REPLACE FUNCTION "public"."policies_history_write"()
    RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
AS $tidemark$
DECLARE
    -- Change context: transaction-local settings pushed by the application; '' means absent.
    -- (NULLIF would resolve its = through the caller's search_path, so the test is spelled out.)
    _now             pg_catalog.timestamptz := pg_catalog.now();
    _changed_by      pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.changed_by', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by', true) END;
    _changed_by_name pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.changed_by_name', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by_name', true) END;
    _correlation_id  pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.correlation_id', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.correlation_id', true) END;
    _reason          pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.reason', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.reason', true) END;
    _extra           pg_catalog.jsonb := (CASE WHEN pg_catalog.current_setting('tidemark.extra', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.extra', true) END)::pg_catalog.jsonb;
    _last_to         pg_catalog.timestamptz;
BEGIN
    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) 'public' OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) 'policies' THEN
        RAISE EXCEPTION 'tidemark: % was generated for public.policies, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
    END IF;

    -- Each event is one statement on history (a statement is most of a one-row trigger's cost).
    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN
        IF NEW."id" OPERATOR(pg_catalog.=) OLD."id" THEN
            -- No versioned column changed: write nothing. Columns without an equality operator
            -- (json, xml, point, ...) are compared as text, so they never break the update.
            -- Each column: equal, or both NULL (IS NOT DISTINCT FROM, which cannot be qualified).
            IF COALESCE(NEW."id" OPERATOR(pg_catalog.=) OLD."id", NEW."id" IS NULL AND OLD."id" IS NULL)
               AND COALESCE(NEW."number" OPERATOR(pg_catalog.=) OLD."number", NEW."number" IS NULL AND OLD."number" IS NULL)
               AND COALESCE(NEW."premium" OPERATOR(pg_catalog.=) OLD."premium", NEW."premium" IS NULL AND OLD."premium" IS NULL)
               AND COALESCE(NEW."status" OPERATOR(pg_catalog.=) OLD."status", NEW."status" IS NULL AND OLD."status" IS NULL)
               AND COALESCE(NEW."holder" OPERATOR(pg_catalog.=) OLD."holder", NEW."holder" IS NULL AND OLD."holder" IS NULL)
               AND COALESCE(NEW."tags" OPERATOR(pg_catalog.=) OLD."tags", NEW."tags" IS NULL AND OLD."tags" IS NULL)
               AND COALESCE(NEW."terms"::pg_catalog.text OPERATOR(pg_catalog.=) OLD."terms"::pg_catalog.text, NEW."terms"::pg_catalog.text IS NULL AND OLD."terms"::pg_catalog.text IS NULL)
               AND COALESCE(NEW."location"::pg_catalog.text OPERATOR(pg_catalog.=) OLD."location"::pg_catalog.text, NEW."location"::pg_catalog.text IS NULL AND OLD."location"::pg_catalog.text IS NULL) THEN
                RETURN NULL;
            END IF;
            -- Close the open version no earlier than 1 microsecond after it began (a transaction
            -- that started before the one that wrote it has an older now()), and open the next
            -- version exactly there, so the chain stays contiguous.
            WITH closed AS (
                UPDATE "public"."policies_history" AS h
                   SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
                 WHERE h."id" OPERATOR(pg_catalog.=) OLD."id" AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
                RETURNING h.valid_to, h.chain_no
            )
            INSERT INTO "public"."policies_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
            SELECT NEW."id", NEW."number", NEW."premium", NEW."status", NEW."holder", NEW."tags", NEW."terms", NEW."location", COALESCE(c.valid_to, _now), 'infinity', 2, COALESCE(c.chain_no, 1), _changed_by, _changed_by_name, _correlation_id, _reason, _extra
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
            UPDATE "public"."policies_history" AS h
               SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
             WHERE h."id" OPERATOR(pg_catalog.=) OLD."id" AND h.valid_to OPERATOR(pg_catalog.=) 'infinity'
            RETURNING h.valid_to, h.chain_no
        )
        INSERT INTO "public"."policies_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
        SELECT OLD."id", OLD."number", OLD."premium", OLD."status", OLD."holder", OLD."tags", OLD."terms", OLD."location", COALESCE(c.valid_to, _now), COALESCE(c.valid_to, _now), 3, COALESCE(c.chain_no, 1), _changed_by, _changed_by_name, _correlation_id, _reason, _extra
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
    INSERT INTO "public"."policies_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
    SELECT NEW."id", NEW."number", NEW."premium", NEW."status", NEW."holder", NEW."tags", NEW."terms", NEW."location", GREATEST(_now, l.valid_to), 'infinity', 1, COALESCE(l.chain_no, 0) OPERATOR(pg_catalog.+) 1, _changed_by, _changed_by_name, _correlation_id, _reason, _extra
      FROM (VALUES (1)) AS one (x)
      LEFT JOIN LATERAL (
            SELECT h.valid_to, h.chain_no
              FROM "public"."policies_history" AS h
             WHERE h."id" OPERATOR(pg_catalog.=) NEW."id"
             ORDER BY h.valid_from DESC, h.valid_to DESC
             LIMIT 1
               FOR UPDATE) AS l ON true
     WHERE COALESCE(l.valid_to OPERATOR(pg_catalog.<>) 'infinity', true)
    ON CONFLICT ("id", chain_no) WHERE operation OPERATOR(pg_catalog.=) 1 DO NOTHING;
    IF NOT FOUND THEN
        -- Rare: find out which of the two refusals it was.
        SELECT h.valid_to INTO _last_to
          FROM "public"."policies_history" AS h
         WHERE h."id" OPERATOR(pg_catalog.=) NEW."id"
         ORDER BY h.valid_from DESC, h.valid_to DESC
         LIMIT 1;
        IF _last_to OPERATOR(pg_catalog.=) 'infinity' THEN
            RAISE EXCEPTION 'tidemark: history of %.% already has an open version for key %',
                  TG_TABLE_SCHEMA, TG_TABLE_NAME, (NEW."id")::pg_catalog.text
                  USING ERRCODE = 'unique_violation',
                        HINT = 'History is out of step with the table (was the trigger disabled?); run TemporalTable.checkInvariants().';
        END IF;
        -- REPEATABLE READ raises this itself; READ COMMITTED gets here only if the other transaction
        -- committed while this one waited. Either way: retry the transaction.
        RAISE EXCEPTION 'tidemark: a concurrent transaction started the same history chain of %.% for key %',
              TG_TABLE_SCHEMA, TG_TABLE_NAME, (NEW."id")::pg_catalog.text
              USING ERRCODE = 'serialization_failure';
    END IF;
    RETURN NULL;
END;
$tidemark$;

-- Nobody else may attach this SECURITY DEFINER function to a table of their own.
REVOKE ALL ON FUNCTION "public"."policies_history_write"() FROM PUBLIC;

-- TRUNCATE fires no row trigger; this closes every open version instead of leaving them open.
CREATE OR REPLACE FUNCTION "public"."policies_history_truncate"()
    RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
AS $tidemark$
DECLARE
    -- Change context: transaction-local settings pushed by the application; '' means absent.
    -- (NULLIF would resolve its = through the caller's search_path, so the test is spelled out.)
    _now             pg_catalog.timestamptz := pg_catalog.now();
    _changed_by      pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.changed_by', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by', true) END;
    _changed_by_name pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.changed_by_name', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.changed_by_name', true) END;
    _correlation_id  pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.correlation_id', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.correlation_id', true) END;
    _reason          pg_catalog.text  := CASE WHEN pg_catalog.current_setting('tidemark.reason', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.reason', true) END;
    _extra           pg_catalog.jsonb := (CASE WHEN pg_catalog.current_setting('tidemark.extra', true) OPERATOR(pg_catalog.<>) '' THEN pg_catalog.current_setting('tidemark.extra', true) END)::pg_catalog.jsonb;
BEGIN
    IF TG_TABLE_SCHEMA OPERATOR(pg_catalog.<>) 'public' OR TG_TABLE_NAME OPERATOR(pg_catalog.<>) 'policies' THEN
        RAISE EXCEPTION 'tidemark: % was generated for public.policies, not for %.%', TG_NAME, TG_TABLE_SCHEMA, TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    -- TRUNCATE deletes every row without firing row triggers: close every open version and
    -- write its tombstone, exactly as a DELETE of each row would have.
    WITH closed AS (
        UPDATE "public"."policies_history" AS h
           SET valid_to = GREATEST(_now, h.valid_from OPERATOR(pg_catalog.+) interval '1 microsecond')
         WHERE h.valid_to OPERATOR(pg_catalog.=) 'infinity'
        RETURNING h."id", h."number", h."premium", h."status", h."holder", h."tags", h."terms", h."location", h.valid_to, h.chain_no
    )
    INSERT INTO "public"."policies_history" ("id", "number", "premium", "status", "holder", "tags", "terms", "location", valid_from, valid_to, operation, chain_no, changed_by, changed_by_name, correlation_id, reason, extra)
    SELECT c."id", c."number", c."premium", c."status", c."holder", c."tags", c."terms", c."location", c.valid_to, c.valid_to, 3, c.chain_no, _changed_by, _changed_by_name, _correlation_id, _reason, _extra
      FROM closed AS c;
    RETURN NULL;
END;
$tidemark$;

-- Nobody else may attach this SECURITY DEFINER function to a table of their own.
REVOKE ALL ON FUNCTION "public"."policies_history_truncate"() FROM PUBLIC;

-- Every row change of the table, whoever makes it, is recorded in the same statement.
CREATE OR REPLACE TRIGGER "policies_history_trg"
    AFTER INSERT OR UPDATE OR DELETE ON "public"."policies"
    FOR EACH ROW EXECUTE FUNCTION "public"."policies_history_write"();

-- TRUNCATE policy: CLOSE_VERSIONS.
CREATE OR REPLACE TRIGGER "policies_history_truncate_trg"
    AFTER TRUNCATE ON "public"."policies"
    FOR EACH STATEMENT EXECUTE FUNCTION "public"."policies_history_truncate"();

-- The table as it was at an instant, as its own row type, so point-in-time joins are plain
-- SQL: SELECT * FROM public.policies_as_of('2024-01-01') AS p JOIN ... Runs with the caller's rights.
CREATE OR REPLACE FUNCTION "public"."policies_as_of"(at timestamptz)
    RETURNS SETOF "public"."policies"
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
     WHERE r.source_schema = 'public' AND r.source_table = 'policies';
    IF at < _horizon THEN
        RAISE EXCEPTION 'tidemark: history of public.policies before % was pruned; ask for an instant at or after it', _horizon
              USING ERRCODE = 'data_exception';
    END IF;
    RETURN QUERY
    SELECT h."id", h."number", h."premium", h."status", h."holder", h."tags", h."terms", h."location", NULL::bytea AS "document"
      FROM "public"."policies_history" AS h
     WHERE tstzrange(h.valid_from, h.valid_to) @> at;
END;
$tidemark$;

-- Register the table, its versioned columns and the hash of its generated function.
INSERT INTO "tidemark"."temporal_tables" (source_schema, source_table, history_schema, history_table,
        key_columns, versioned_columns, orphan_columns, options, function_hash)
VALUES ('public', 'policies', 'public', 'policies_history',
        '["id"]',
        '[{"name":"id","type":"bigint"},{"name":"number","type":"character varying(20)"},{"name":"premium","type":"public.money_amount"},{"name":"status","type":"public.policy_status"},{"name":"holder","type":"text COLLATE pg_catalog.\"C\""},{"name":"tags","type":"text[]"},{"name":"terms","type":"json"},{"name":"location","type":"point"}]',
        '[]',
        '{"settingsPrefix":"tidemark","truncatePolicy":"CLOSE_VERSIONS","triggerMode":"ROW","periodIndex":false,"sessionUserColumn":false,"transactionIdColumn":false,"excluded":["document"]}',
        '425004b5e343d39ebe57d530e35e2a2dd18eb68b303a9a6983dc69a26ea49098')
ON CONFLICT (source_schema, source_table) DO UPDATE
   SET key_columns = EXCLUDED.key_columns, versioned_columns = EXCLUDED.versioned_columns,
       orphan_columns = EXCLUDED.orphan_columns, options = EXCLUDED.options,
       function_hash = EXCLUDED.function_hash, evolved_at = pg_catalog.now();

